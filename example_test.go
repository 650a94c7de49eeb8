package kvschema_test

import (
	"context"
	"fmt"
	"log"

	"github.com/kvschema/kvschema"
	"github.com/kvschema/kvschema/cost"
	_ "github.com/kvschema/kvschema/store/memstore"
)

// A store holds an advised schema (here a hand-written one: kvschema
// advise --format ddl writes the same statements) next to relations the
// client defines; one DB runs statements on both.
func ExampleDB_Deploy() {
	ctx := context.Background()
	db, err := kvschema.Open(ctx, "mem:", kvschema.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	const model = `
DEFINE RELATION users ROWS 100 { id BIGINT KEY, nickname STRING CARDINALITY 100 };
DEFINE RELATION items ROWS 1000 {
  id BIGINT KEY, name STRING CARDINALITY 1000, price DOUBLE CARDINALITY 500,
  seller BIGINT REFERENCES users REVERSE items_sold
};`
	const schema = `
DEFINE COLUMN FAMILY users_by_id FOR users { PARTITION KEY (users.id), VALUES (users.nickname) };
DEFINE COLUMN FAMILY items_by_seller FOR users {
  PARTITION KEY (users.id), CLUSTERING KEY (users.items_sold.id),
  VALUES (users.nickname, users.items_sold.name, users.items_sold.price)
};`
	// The runtime plans with the profile of kvschema's engine on Pebble;
	// notes would say that the schema was advised for another kind of
	// store (its DDL records its target).
	notes, err := db.Deploy(ctx, "model.kvs", []byte(model), "schema.kvs", []byte(schema), cost.Pebble)
	if err != nil {
		log.Fatal(err)
	}
	for _, n := range notes {
		fmt.Println("note:", n)
	}
	for _, s := range []string{
		"INSERT INTO users VALUES (1, 'ann')",
		"INSERT INTO items SET id = 10, name = 'lamp', price = 12.5 AND CONNECT TO seller(1)",
		"INSERT INTO items SET id = 11, name = 'desk', price = 80 AND CONNECT TO seller(1)",
		"UPDATE users SET nickname = 'annie' WHERE users.id = 1", // every copy of it changes
	} {
		if _, err := db.Exec(ctx, s); err != nil {
			log.Fatal(err)
		}
	}
	rows, err := db.Query(ctx, "SELECT items.name, items.price, items.seller.nickname FROM items WHERE items.seller.id = ?", 1)
	if err != nil {
		log.Fatal(err)
	}
	for rows.Next() {
		var name, seller string
		var price float64
		if err := rows.Scan(&name, &price, &seller); err != nil {
			log.Fatal(err)
		}
		fmt.Println(name, price, seller)
	}
	// Output:
	// lamp 12.5 annie
	// desk 80 annie
}
