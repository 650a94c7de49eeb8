package lang

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kvschema/kvschema/types"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// attr is an AttrDef shorthand for expected CREATE TABLE results.
func attr(name string, t types.Type) AttrDef { return AttrDef{Name: name, Type: t} }

func key(a AttrDef) AttrDef { a.Key = true; return a }

func refs(a AttrDef, rel, refAttr, reverse string) AttrDef {
	a.References, a.RefAttr, a.Reverse = rel, refAttr, reverse
	return a
}

func stats(a AttrDef, size, card int64) AttrDef {
	a.Size, a.Cardinality = size, card
	return a
}

// TestCreateTable: each construct of the SQL DDL subset, what it becomes,
// and that it prints as a DEFINE RELATION that parses back to the same.
func TestCreateTable(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      *DefineRelation
	}{
		{
			name: "seed 000's example: a column PRIMARY KEY",
			src:  "CREATE TABLE user(\n    id integer PRIMARY KEY,\n    firstname text,\n    password text );",
			want: &DefineRelation{Name: "user", Attrs: []AttrDef{key(attr("id", types.BigInt)), attr("firstname", types.String), attr("password", types.String)}},
		},
		{
			name: "PostgreSQL arrays: frozen lists",
			src:  "CREATE TABLE t (id int PRIMARY KEY, tags text[], scores integer ARRAY[3], names varchar(20)[4], at timestamp with time zone ARRAY)",
			want: &DefineRelation{Name: "t", Attrs: []AttrDef{key(attr("id", types.BigInt)), attr("tags", types.ListOf(types.String).Frozen()),
				attr("scores", types.ListOf(types.BigInt).Frozen()), attr("names", types.ListOf(types.String).Frozen()),
				attr("at", types.ListOf(types.Timestamp).Frozen())}},
		},
		{
			name: "every type mapping",
			src: `CREATE TABLE t (a smallint, b integer, c int, d bigint, e int2, f int4, g int8, h tinyint(1), i mediumint,
				j serial, k bigserial, l smallserial, m varchar(20), n character varying(20), o char(3), p character(3),
				q nchar(2), r nvarchar(9), s text, t2 tinytext, u mediumtext, v longtext, w enum('a', 'b'),
				x real, y double precision, z double, a2 float, b2 float8, c2 numeric(10, 2), d2 decimal(5), e2 dec,
				f2 boolean, g2 bool, h2 date, i2 timestamp, j2 timestamp(6) without time zone, k2 timestamp with time zone,
				l2 timestamptz, m2 datetime(3), n2 bytea, o2 blob, p2 longblob, q2 binary(16), r2 varbinary(255),
				s2 int(11) unsigned zerofill, t3 decimal(10,2) signed, u2 STRING, v2 BYTES, w2 float4, x2 int unsigned)`,
			want: &DefineRelation{Name: "t", Attrs: []AttrDef{
				attr("a", types.BigInt), attr("b", types.BigInt), attr("c", types.BigInt), attr("d", types.BigInt),
				attr("e", types.BigInt), attr("f", types.BigInt), attr("g", types.BigInt), attr("h", types.BigInt), attr("i", types.BigInt),
				attr("j", types.BigInt), attr("k", types.BigInt), attr("l", types.BigInt), attr("m", types.String), attr("n", types.String),
				attr("o", types.String), attr("p", types.String), attr("q", types.String), attr("r", types.String), attr("s", types.String),
				attr("t2", types.String), attr("u", types.String), attr("v", types.String), attr("w", types.String),
				attr("x", types.Double), attr("y", types.Double), attr("z", types.Double), attr("a2", types.Double), attr("b2", types.Double),
				attr("c2", types.Double), attr("d2", types.Double), attr("e2", types.Double),
				attr("f2", types.Bool), attr("g2", types.Bool), attr("h2", types.Timestamp), attr("i2", types.Timestamp),
				attr("j2", types.Timestamp), attr("k2", types.Timestamp), attr("l2", types.Timestamp), attr("m2", types.Timestamp),
				attr("n2", types.Bytes), attr("o2", types.Bytes), attr("p2", types.Bytes), attr("q2", types.Bytes), attr("r2", types.Bytes),
				attr("s2", types.BigInt), attr("t3", types.Double), attr("u2", types.String), attr("v2", types.Bytes),
				attr("w2", types.Double), attr("x2", types.BigInt),
			}},
		},
		{
			name: "table constraints, schema-qualified names, quoted names, IF NOT EXISTS",
			src: `CREATE TABLE IF NOT EXISTS public.bids (
				id bigint NOT NULL, item integer NOT NULL, "user" integer, qty integer,
				CONSTRAINT bids_pkey PRIMARY KEY (id),
				CONSTRAINT bids_item_fkey FOREIGN KEY (item) REFERENCES public.items(id) ON DELETE CASCADE ON UPDATE NO ACTION,
				FOREIGN KEY ("user") REFERENCES users MATCH SIMPLE ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED,
				UNIQUE (item, "user"), CHECK (qty > 0))`,
			want: &DefineRelation{Name: "bids", Attrs: []AttrDef{
				key(attr("id", types.BigInt)), refs(attr("item", types.BigInt), "items", "id", ""),
				refs(attr("user", types.BigInt), "users", "", ""), attr("qty", types.BigInt),
			}},
		},
		{
			name: "composite primary key",
			src:  "CREATE TABLE ev (grp int, seq int, v text, PRIMARY KEY (grp, seq))",
			want: &DefineRelation{Name: "ev", Attrs: []AttrDef{key(attr("grp", types.BigInt)), key(attr("seq", types.BigInt)), attr("v", types.String)}},
		},
		{
			name: "column constraints accepted and ignored",
			src: `CREATE TABLE t (
				id integer GENERATED ALWAYS AS IDENTITY (START WITH 1) PRIMARY KEY,
				a varchar(9) DEFAULT 'x'::character varying NOT NULL UNIQUE,
				b timestamp without time zone DEFAULT now() NULL,
				c bigint DEFAULT nextval('t_c_seq'::regclass) CHECK (c > 0) CONSTRAINT c_ok CHECK (c < 100),
				d numeric DEFAULT -1.5, e boolean DEFAULT false, f integer DEFAULT (1), g text DEFAULT NULL::text,
				h timestamp DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
				i int GENERATED BY DEFAULT AS IDENTITY, j int GENERATED ALWAYS AS (i + 1) STORED,
				k int REFERENCES u ON DELETE RESTRICT NOT DEFERRABLE)`,
			want: &DefineRelation{Name: "t", Attrs: []AttrDef{
				key(attr("id", types.BigInt)), attr("a", types.String), attr("b", types.Timestamp), attr("c", types.BigInt),
				attr("d", types.Double), attr("e", types.Bool), attr("f", types.BigInt), attr("g", types.String),
				attr("h", types.Timestamp), attr("i", types.BigInt), attr("j", types.BigInt), refs(attr("k", types.BigInt), "u", "", ""),
			}},
		},
		{
			name: "a MySQL dump's table",
			src: "CREATE TABLE `items` (\n" +
				"  `id` int(11) NOT NULL AUTO_INCREMENT,\n" +
				"  `name` varchar(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL COMMENT 'the name',\n" +
				"  `state` enum('open','closed') DEFAULT 'open',\n" +
				"  `seller` int(10) unsigned DEFAULT NULL,\n" +
				"  key text,\n" +
				"  PRIMARY KEY (`id`) USING BTREE,\n" +
				"  UNIQUE KEY `name_u` (`name`(10)),\n" +
				"  KEY `seller_idx` (`seller`),\n" +
				"  INDEX (`state`, `seller` DESC),\n" +
				"  FULLTEXT KEY `ft` (`name`),\n" +
				"  CONSTRAINT `items_ibfk_1` FOREIGN KEY (`seller`) REFERENCES `users` (`id`) ON DELETE CASCADE\n" +
				") ENGINE=InnoDB AUTO_INCREMENT=42 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci ROW_FORMAT=DYNAMIC COMMENT='shop items';",
			want: &DefineRelation{Name: "items", Attrs: []AttrDef{
				key(attr("id", types.BigInt)), attr("name", types.String), attr("state", types.String),
				refs(attr("seller", types.BigInt), "users", "id", ""), attr("key", types.String),
			}},
		},
		{
			name: "annotations: ROWS on the CREATE TABLE line, statistics and reverse names on the columns' lines",
			src: "CREATE TABLE items ( -- ROWS 20000\n" +
				"  id integer PRIMARY KEY, -- SIZE 16\n" +
				"  -- a comment on a line of its own is no annotation: SIZE 3\n" +
				"  name text, -- size: 19, cardinality: 20000\n" +
				"  price numeric(10,2), -- the asking price; lower case prose is no annotation\n" +
				"  seller integer -- REVERSE items_sold SIZE 16\n" +
				"    REFERENCES users(id),\n" +
				"  category integer, -- reverse=listed\n" +
				"  FOREIGN KEY (category) REFERENCES categories\n" +
				"); -- cardinality 5: annotates no column (lower case, no colon)",
			want: &DefineRelation{Name: "items", Rows: 20000, Attrs: []AttrDef{
				stats(key(attr("id", types.BigInt)), 16, 0), stats(attr("name", types.String), 19, 20000), attr("price", types.Double),
				stats(refs(attr("seller", types.BigInt), "users", "id", "items_sold"), 16, 0),
				refs(attr("category", types.BigInt), "categories", "", "listed"),
			}},
		},
		{
			name: "annotations on the closing line and on a FOREIGN KEY constraint's line",
			src: "CREATE TABLE bids (\n" +
				"  id integer,\n" +
				"  item integer,\n" +
				"  FOREIGN KEY (item) REFERENCES items, -- REVERSE bids_on\n" +
				"  PRIMARY KEY (id)\n" +
				"); -- ROWS 7",
			want: &DefineRelation{Name: "bids", Rows: 7, Attrs: []AttrDef{key(attr("id", types.BigInt)), refs(attr("item", types.BigInt), "items", "", "bids_on")}},
		},
		{
			name: "a one-line table: ROWS after its ';'",
			src:  "CREATE TABLE t (id int PRIMARY KEY, a text); -- ROWS 12",
			want: &DefineRelation{Name: "t", Rows: 12, Attrs: []AttrDef{key(attr("id", types.BigInt)), attr("a", types.String)}},
		},
		{
			name: "kvschema's REVERSE clause after REFERENCES",
			src:  "CREATE TABLE c (id int PRIMARY KEY, from_user int REFERENCES users(id) REVERSE comments_sent)",
			want: &DefineRelation{Name: "c", Attrs: []AttrDef{key(attr("id", types.BigInt)), refs(attr("from_user", types.BigInt), "users", "id", "comments_sent")}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ss, err := ParseScript("t.sql", []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			if len(ss) != 1 {
				t.Fatalf("%d statements", len(ss))
			}
			if !EqualIgnoringPos(ss[0], tc.want) {
				t.Fatalf("(-got +want):\n%s", diffIgnoringPos(ss[0], tc.want))
			}
			if !strings.HasPrefix(roundTrip(t, ss[0]), "DEFINE RELATION ") {
				t.Error("a CREATE TABLE prints as DEFINE RELATION")
			}
		})
	}
}

// TestCreateTablePositions: the relation is at CREATE, each attribute at
// its name.
func TestCreateTablePositions(t *testing.T) {
	ss, err := ParseScript("p.sql", []byte("\n  CREATE TABLE public.t (\n    a int,\n    \"b\" text)"))
	if err != nil {
		t.Fatal(err)
	}
	d := ss[0].(*DefineRelation)
	got := []Pos{d.At, d.Attrs[0].At, d.Attrs[1].At}
	want := []Pos{{"p.sql", 2, 3}, {"p.sql", 3, 5}, {"p.sql", 4, 5}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
}

// ddlErrorTests are CREATE TABLE and ALTER TABLE inputs outside the subset,
// with the position and message of their errors.
var ddlErrorTests = []struct{ name, src, pos, msg string }{
	{"unsupported type", "CREATE TABLE t (id xml)", "1:20", "column id: type 'xml' is not supported (supported: smallint, integer"},
	{"two-dimensional array", "CREATE TABLE t (id int PRIMARY KEY, m integer[][])", "1:48", "column m: multidimensional arrays are not supported"},
	{"two-dimensional ARRAY", "CREATE TABLE t (id int PRIMARY KEY, m integer ARRAY[2] ARRAY)", "1:56", "column m: multidimensional arrays are not supported"},
	{"unclosed array", "CREATE TABLE t (id int PRIMARY KEY, m text[3)", "1:45", "expected ']' to close the array type"},
	{"no type", "CREATE TABLE t (a)", "1:18", "expected type of column a, found ')'"},
	{"bad length", "CREATE TABLE t (a varchar(x))", "1:27", "expected length or precision of varchar, found 'x'"},
	{"bad enum", "CREATE TABLE t (a enum(1))", "1:24", "expected string value of enum, found number 1"},
	{"WITH TIME without ZONE", "CREATE TABLE t (a timestamp with time)", "1:38", "expected ZONE in WITH[OUT] TIME ZONE, found ')'"},
	{"unsupported column constraint", "CREATE TABLE t (id int PRIMARY KEY DEFERRABLE)", "1:36", "column id: 'DEFERRABLE' is not supported here (column constraints: NOT NULL"},
	{"NOT without NULL", "CREATE TABLE t (a int NOT 5)", "1:27", "expected NULL after NOT, found number 5"},
	{"second primary key", "CREATE TABLE t (a int PRIMARY KEY, b int PRIMARY KEY)", "1:42", "relation t: a second PRIMARY KEY (the first is at 1:23)"},
	{"second primary key constraint", "CREATE TABLE t (a int PRIMARY KEY, PRIMARY KEY (a))", "1:36", "relation t: a second PRIMARY KEY (the first is at 1:23)"},
	{"primary key on an unknown column", "CREATE TABLE t (a int, PRIMARY KEY (b))", "1:37", "relation t has no column b for its PRIMARY KEY"},
	{"foreign key on an unknown column", "CREATE TABLE t (a int, FOREIGN KEY (b) REFERENCES u)", "1:37", "relation t has no column b for its FOREIGN KEY"},
	{"composite foreign key", "CREATE TABLE t (a int, b int, FOREIGN KEY (a, b) REFERENCES u (x, y))", "1:47", "composite foreign keys are not supported"},
	{"composite referenced key", "CREATE TABLE t (a int REFERENCES u (x, y))", "1:38", "a foreign key references one attribute"},
	{"two REFERENCES", "CREATE TABLE t (a int REFERENCES u REFERENCES v)", "1:36", "column a: a second REFERENCES"},
	{"FOREIGN KEY on a referencing column", "CREATE TABLE t (a int REFERENCES u, FOREIGN KEY (a) REFERENCES v)", "1:50", "relation t: column a already REFERENCES u"},
	{"bad ON DELETE", "CREATE TABLE t (a int REFERENCES u ON DELETE NOTHING)", "1:46", "expected CASCADE, RESTRICT, NO ACTION, SET NULL or SET DEFAULT, found 'NOTHING'"},
	{"duplicate column", "CREATE TABLE t (a int, A text)", "1:24", "relation t: column A is declared twice"},
	{"dotted column", `CREATE TABLE t ("a.b" int)`, "1:17", `column name "a.b" cannot contain '.'`},
	{"dotted table", `CREATE TABLE "s.t" (a int)`, "1:14", `relation name "s.t" cannot contain '.'`},
	{"no columns", "CREATE TABLE t (CHECK (x > 0))", "1:1", "CREATE TABLE t has no columns"},
	{"empty", "CREATE TABLE t ()", "1:17", "expected column name, found ')'"},
	{"LIKE", "CREATE TABLE t (LIKE u)", "1:17", "CREATE TABLE … (LIKE …) is not supported"},
	{"AS SELECT", "CREATE TABLE t AS SELECT 1", "1:16", "CREATE TABLE t AS is not supported: give the table's columns"},
	{"temporary table", "CREATE TEMPORARY TABLE t (a int)", "1:1", "CREATE TEMPORARY TABLE is not supported (kvschema reads CREATE TABLE"},
	{"index", "CREATE UNIQUE INDEX i ON t (a)", "1:1", "CREATE UNIQUE INDEX is not supported (kvschema reads CREATE TABLE; in a model file an SQL dump's other statements are skipped)"},
	{"table option", "CREATE TABLE t (a int) TABLESPACE fast", "1:24", "table option 'TABLESPACE' is not supported"},
	{"table option without value", "CREATE TABLE t (a int) ENGINE=", "1:31", "expected value of table option ENGINE, found end of input"},
	{"missing ','", "CREATE TABLE t (a int b int)", "1:23", "column a: 'b' is not supported here"},
	{"unclosed column list", "CREATE TABLE t (a int CHECK (a > 0)", "1:36", "expected ',' or ')' after a column or constraint of t, found end of input"},
	{"unbalanced CHECK", "CREATE TABLE t (a int CHECK (a > (0)", "1:37", "expected ')' to match '(' at 1:29, found end of input"},
	{"bad DEFAULT", "CREATE TABLE t (a int DEFAULT ,)", "1:31", "expected DEFAULT value"},
	{"next statement without ';'", "CREATE TABLE t (a int)\nCREATE TABLE u (b int)", "2:1", "expected ';' or end of input after statement, found 'CREATE'"},
	{"unknown annotation", "CREATE TABLE t (\n a int, -- SIZE 4 COLOR 5\n b int)", "2:19", "unknown annotation 'COLOR' (annotations: ROWS n, SIZE n, CARDINALITY n, REVERSE name)"},
	{"bad ROWS", "CREATE TABLE t ( -- ROWS x\n a int)", "1:26", "expected a positive integer after ROWS, found 'x'"},
	{"zero SIZE", "CREATE TABLE t (\n a int -- SIZE: 0\n)", "2:17", "expected a positive integer after SIZE, found '0'"},
	{"bad REVERSE", "CREATE TABLE t (\n a int REFERENCES u -- REVERSE 9x\n)", "2:32", "expected the name of the reverse relationship after REVERSE, found '9x'"},
	{"SIZE on the table's line", "CREATE TABLE t ( -- SIZE 4\n a int)", "1:21", "SIZE annotates a column: put it at the end of the column's line (this line holds no column of t)"},
	{"SIZE on a FOREIGN KEY line", "CREATE TABLE t (\n a int,\n FOREIGN KEY (a) REFERENCES u -- SIZE 4\n)", "3:34", "SIZE annotates a column, not a FOREIGN KEY constraint"},
	{"REVERSE on an ordinary column", "CREATE TABLE t (\n a int -- REVERSE x\n)", "2:2", "relation t: REVERSE annotates a foreign key, and column a references nothing"},
	{"two columns on an annotated line", "CREATE TABLE t (\n a int, b int -- SIZE 4\n)", "2:18", "SIZE annotates a column, and this line holds several columns or constraints: put each on a line of its own to annotate it"},
	{"ROWS twice", "CREATE TABLE t ( -- ROWS 5\n a int -- ROWS 6\n)", "2:11", "relation t: ROWS is annotated twice (first at 1:21)"},
	{"SIZE twice", "CREATE TABLE t (\n a int -- SIZE 4 SIZE 5\n)", "2:18", "column a: SIZE is annotated twice"},
	{"two reverse names", "CREATE TABLE t (\n a int REFERENCES u REVERSE x -- REVERSE y\n)", "2:34", "column a: its reverse relationship is named twice (x and y)"},
	{"ALTER TABLE OWNER TO", "ALTER TABLE t OWNER TO x", "1:1", "ALTER TABLE … OWNER is not supported (kvschema reads ALTER TABLE … ADD PRIMARY KEY and ADD FOREIGN KEY"},
	{"ALTER TABLE ADD UNIQUE", "ALTER TABLE t ADD CONSTRAINT u UNIQUE (a)", "1:1", "ALTER TABLE … ADD UNIQUE is not supported"},
	{"ALTER SEQUENCE", "ALTER SEQUENCE s OWNED BY t.a", "1:1", "ALTER SEQUENCE is not supported"},
	{"ALTER TABLE ADD COLUMN", "ALTER TABLE t ADD COLUMN c int", "1:15", "ALTER TABLE t ADD COLUMN … changes the table, which kvschema does not follow"},
	{"ALTER TABLE DROP", "ALTER TABLE t DROP COLUMN c", "1:15", "ALTER TABLE t DROP … changes the table"},
	{"ALTER COLUMN TYPE", "ALTER TABLE t ALTER COLUMN c TYPE text", "1:15", "ALTER TABLE t ALTER COLUMN c TYPE … changes the table"},
	{"ALTER TABLE with two actions", "ALTER TABLE t ADD PRIMARY KEY (a), ADD FOREIGN KEY (b) REFERENCES u", "1:34", "ALTER TABLE adds one key or foreign key per statement here"},
	{"ROWS on ALTER TABLE", "ALTER TABLE t ADD PRIMARY KEY (a) -- ROWS 5", "1:38", "ROWS does not annotate ALTER TABLE"},
	{"ALTER TABLE composite foreign key", "ALTER TABLE t ADD FOREIGN KEY (a, b) REFERENCES u", "1:35", "composite foreign keys are not supported"},
	{"ALTER TABLE IF without EXISTS", "ALTER TABLE IF t ADD PRIMARY KEY (a)", "1:16", "expected EXISTS after IF, found 't'"},
	{"LEFT JOIN", "SELECT * FROM a LEFT JOIN b ON a.x = b.id", "1:17", "LEFT JOIN is not supported: kvschema's joins are inner joins along foreign keys"},
	{"comma join without a condition", "SELECT * FROM a, b WHERE a.x = 1", "1:18", "FROM … , b: the WHERE clause has no condition b.fk = x.key (or x.fk = b.key) joining it to a relation listed before it"},
	{"comma join joined to a later relation", "SELECT * FROM a, b, c WHERE b.x = c.id AND c.y = a.id", "1:18", "FROM … , b: the WHERE clause has no condition"},
}

func TestDDLErrors(t *testing.T) {
	for _, tc := range ddlErrorTests {
		t.Run(tc.name, func(t *testing.T) {
			ss, err := ParseScript("bad.sql", []byte(tc.src))
			if err == nil {
				t.Fatalf("no error; parsed %s", PrintScript(ss))
			}
			if want := "bad.sql:" + tc.pos + ": "; !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("got  %v\nwant %s…%s…", err, want, tc.msg)
			}
		})
	}
}

// TestAlterTable: the keys pg_dump adds after its tables.
func TestAlterTable(t *testing.T) {
	for _, tc := range []struct {
		src, printed string
		want         *AlterTable
	}{
		{
			src:     "ALTER TABLE ONLY public.users\n    ADD CONSTRAINT users_pkey PRIMARY KEY (id);",
			want:    &AlterTable{Relation: "users", PrimaryKey: []string{"id"}},
			printed: "ALTER TABLE users ADD PRIMARY KEY (id)",
		},
		{
			src:     "ALTER TABLE `ev` ADD PRIMARY KEY (`grp`, `seq`) USING BTREE",
			want:    &AlterTable{Relation: "ev", PrimaryKey: []string{"grp", "seq"}},
			printed: "ALTER TABLE ev ADD PRIMARY KEY (grp, seq)",
		},
		{
			src:     "ALTER TABLE IF EXISTS ONLY public.items -- REVERSE items_sold\n    ADD CONSTRAINT items_seller_fkey FOREIGN KEY (seller) REFERENCES public.users(id) ON DELETE CASCADE NOT VALID;",
			want:    &AlterTable{Relation: "items", ForeignKey: "seller", References: "users", RefAttr: "id", Reverse: "items_sold"},
			printed: "ALTER TABLE items ADD FOREIGN KEY (seller) REFERENCES users(id) REVERSE items_sold",
		},
		{
			src:     "ALTER TABLE bids ADD FOREIGN KEY (item) REFERENCES items; -- reverse: bids",
			want:    &AlterTable{Relation: "bids", ForeignKey: "item", References: "items", Reverse: "bids"},
			printed: "ALTER TABLE bids ADD FOREIGN KEY (item) REFERENCES items REVERSE bids",
		},
		{
			src:     `ALTER TABLE "only" ADD PRIMARY KEY (a)`,
			want:    &AlterTable{Relation: "only", PrimaryKey: []string{"a"}},
			printed: `ALTER TABLE "only" ADD PRIMARY KEY (a)`,
		},
	} {
		ss, err := ParseScript("a.sql", []byte(tc.src))
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		if !EqualIgnoringPos(ss[0], tc.want) {
			t.Errorf("%s (-got +want):\n%s", tc.src, diffIgnoringPos(ss[0], tc.want))
		}
		if got := roundTrip(t, ss[0]); got != tc.printed {
			t.Errorf("printed %s, want %s", got, tc.printed)
		}
	}
	ss, _ := ParseScript("a.sql", []byte("\nALTER TABLE ONLY users ADD CONSTRAINT x FOREIGN KEY (region) REFERENCES regions"))
	if a := ss[0].(*AlterTable); a.At != (Pos{"a.sql", 2, 1}) || a.RelationAt != (Pos{"a.sql", 2, 18}) || a.AttrAt != (Pos{"a.sql", 2, 54}) {
		t.Errorf("positions: at %v, relation %v, attribute %v", a.At, a.RelationAt, a.AttrAt)
	}
}

// TestParseModel: a pg_dump and a mysqldump of the same schema; what a model
// file skips, with its notes, and what it reads.
func TestParseModel(t *testing.T) {
	src := `--
-- PostgreSQL database dump
--
SET statement_timeout = 0;
SELECT pg_catalog.set_config('search_path', '', false);
CREATE SCHEMA shop;
CREATE EXTENSION IF NOT EXISTS plpgsql WITH SCHEMA pg_catalog;
COMMENT ON EXTENSION plpgsql IS 'PL/pgSQL procedural language';
CREATE TABLE public.users (
    id integer NOT NULL,
    nickname character varying(20)
);
ALTER TABLE public.users OWNER TO postgres;
CREATE SEQUENCE public.users_id_seq AS integer START WITH 1 INCREMENT BY 1 NO MINVALUE NO MAXVALUE CACHE 1;
ALTER SEQUENCE public.users_id_seq OWNED BY public.users.id;
ALTER TABLE ONLY public.users ALTER COLUMN id SET DEFAULT nextval('public.users_id_seq'::regclass);
ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);
ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_nick_key UNIQUE (nickname);
CREATE UNIQUE INDEX users_nick ON public.users USING btree (nickname);
DROP TABLE IF EXISTS old;
GRANT ALL ON TABLE public.users TO app;
/*!40101 SET @saved_cs_client = @@character_set_client */;
LOCK TABLES ` + "`users`" + ` WRITE;
INSERT INTO users VALUES (1, 'ann');
UNLOCK TABLES;
DEFINE RELATION regions ROWS 5 { id BIGINT KEY }
`
	want := []string{
		"dump.sql:4:1: skipped SET: not part of the conceptual model",
		"dump.sql:5:1: skipped SELECT: queries are not part of the model (a workload goes in --workload or --workload-log)",
		"dump.sql:6:1: skipped CREATE SCHEMA: not part of the conceptual model",
		"dump.sql:7:1: skipped CREATE EXTENSION: not part of the conceptual model",
		"dump.sql:8:1: skipped COMMENT ON EXTENSION: not part of the conceptual model",
		"dump.sql:13:1: skipped ALTER TABLE … OWNER: not part of the conceptual model",
		"dump.sql:14:1: skipped CREATE SEQUENCE: not part of the conceptual model",
		"dump.sql:15:1: skipped ALTER SEQUENCE: not part of the conceptual model",
		"dump.sql:16:1: skipped ALTER TABLE … ALTER COLUMN: not part of the conceptual model",
		"dump.sql:19:1: skipped ALTER TABLE … ADD UNIQUE: not part of the conceptual model",
		"dump.sql:21:1: skipped CREATE UNIQUE INDEX: indexes are physical design, which kvschema advises",
		"dump.sql:22:1: skipped DROP TABLE: not part of the conceptual model",
		"dump.sql:23:1: skipped GRANT ALL: not part of the conceptual model",
		"dump.sql:25:1: skipped LOCK TABLES: not part of the conceptual model",
		"dump.sql:26:1: skipped INSERT: data is not part of the model (kvschema load reads data files)",
		"dump.sql:27:1: skipped UNLOCK TABLES: not part of the conceptual model",
	}
	notes := checkModel(t, "dump.sql", src, want, []Statement{
		&DefineRelation{Name: "users", Attrs: []AttrDef{attr("id", types.BigInt), attr("nickname", types.String)}},
		&AlterTable{Relation: "users", PrimaryKey: []string{"id"}},
		&DefineRelation{Name: "regions", Rows: 5, Attrs: []AttrDef{key(attr("id", types.BigInt))}},
	})
	if notes[0].Kind != "SET" || notes[10].Kind != "CREATE UNIQUE INDEX" {
		t.Errorf("kinds %q, %q", notes[0].Kind, notes[10].Kind)
	}

	// What a model file does not skip: errors, with their positions.
	for _, tc := range []struct{ src, want string }{
		{"SET x = 1;\nCREATE TABLE t (a xml);", "m.sql:2:19: column a: type 'xml' is not supported"},
		{"ALTER TABLE t ADD COLUMN c int;", "m.sql:1:15: ALTER TABLE t ADD COLUMN … changes the table"},
		{"SET x = 'unterminated;", "m.sql:1:9: unterminated string literal"},
		{"DEFINE RELATION r { a INT", "m.sql:1:26: expected ',' or '}' after attribute definition"},
		{"CREATE TABLE t (a int) CREATE TABLE u (a int)", "m.sql:1:24: expected ';' or end of input after statement, found 'CREATE'"},
	} {
		_, _, err := ParseModel("m.sql", []byte(tc.src))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %s…", tc.src, err, tc.want)
		}
	}
}

// TestCQLModel: a Cassandra schema (CQL's CREATE TABLE) reads as a model:
// CQL's types, collections stored one cell per element (frozen ones as
// one value), PRIMARY KEY ((partition), clustering…) as the whole key, and
// what the advisor chooses instead — the partition key, STATIC, WITH
// CLUSTERING ORDER BY and storage options — noted where it was read.
func TestCQLModel(t *testing.T) {
	src := `CREATE KEYSPACE chat WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
USE chat;
CREATE TABLE chat.rooms (id uuid PRIMARY KEY, name text, mods set<bigint>);
CREATE TABLE messages (
  room_id uuid, ts timestamp, id timeuuid, body text, tags set<text>, votes map<text, int>,
  edits list<timestamp>, files frozen<list<blob>>, room_name text STATIC,
  PRIMARY KEY ((room_id, ts), id)
) WITH CLUSTERING ORDER BY (id DESC) AND compaction = {'class': 'LeveledCompactionStrategy'};
CREATE INDEX ON messages (tags);`
	checkModel(t, "chat.cql", src, []string{
		"chat.cql:1:1: skipped CREATE KEYSPACE: not part of the conceptual model",
		"chat.cql:2:1: skipped USE: not part of the conceptual model",
		"chat.cql:6:67: column room_name: STATIC read as an ordinary attribute: the advisor chooses static columns (advise --static-columns)",
		"chat.cql:7:15: CQL partition key (room_id, ts) read as part of the key (room_id, ts, id): the advisor chooses partition keys",
		"chat.cql:8:3: CQL table options skipped (clustering order, compaction, …): the advisor and the store choose them",
		"chat.cql:9:1: skipped CREATE INDEX: indexes are physical design, which kvschema advises",
	}, []Statement{
		&DefineRelation{Name: "rooms", Attrs: []AttrDef{key(attr("id", types.String)), attr("name", types.String), attr("mods", types.SetOf(types.BigInt))}},
		&DefineRelation{Name: "messages", Attrs: []AttrDef{key(attr("room_id", types.String)), key(attr("ts", types.Timestamp)), key(attr("id", types.String)),
			attr("body", types.String), attr("tags", types.SetOf(types.String)), attr("votes", types.MapOf(types.String, types.BigInt)),
			attr("edits", types.ListOf(types.Timestamp)), attr("files", types.ListOf(types.Bytes).Frozen()), attr("room_name", types.String)}},
	})
	for _, tc := range []struct{ src, want string }{
		{"CREATE TABLE t (a set<list<int>>, PRIMARY KEY (a));", "m.cql:1:23: column a: a collection's elements are scalars"},
		{"CREATE TABLE t (a frozen<int>);", "m.cql:1:26: expected set<T>, list<T> or map<K, V> after frozen<"},
		{"CREATE TABLE t (a map<int>);", "m.cql:1:26: expected ',' after the key type of map<K, V>"},
		{"CREATE TABLE t (a int PRIMARY KEY) WITH x = {'a': (1};", "m.cql:1:55: expected ')' or '}'"},
		{"CREATE TABLE t (a int, PRIMARY KEY ((a), ));", "m.cql:1:42: expected column name"},
	} {
		_, _, err := ParseModel("m.cql", []byte(tc.src))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %s…", tc.src, err, tc.want)
		}
	}
}

// TestCommaJoins: FROM a x, b y WHERE y.fk = x.id … reads as JOIN … ON.
func TestCommaJoins(t *testing.T) {
	for _, tc := range []struct{ src, printed string }{
		{
			"SELECT i.name FROM items i, users u WHERE u.id = ? AND i.seller = u.id",
			"SELECT i.name FROM items AS i JOIN users AS u ON i.seller = u.id WHERE u.id = ?",
		},
		{
			"SELECT u.nickname, b.bid FROM users u, bids b, items i WHERE i.id = ? AND b.item = i.id AND b.user = u.id ORDER BY b.bid LIMIT 3",
			"SELECT u.nickname, b.bid FROM users AS u JOIN bids AS b ON b.user = u.id JOIN items AS i ON b.item = i.id WHERE i.id = ? ORDER BY b.bid LIMIT 3",
		},
		{
			"SELECT * FROM items, users WHERE users.id = items.seller",
			"SELECT * FROM items JOIN users ON users.id = items.seller",
		},
		{
			"SELECT * FROM items i, users u JOIN regions r ON u.region = r.id WHERE i.seller = u.id AND r.id = 1 AND i.price > 2",
			"SELECT * FROM items AS i JOIN users AS u ON i.seller = u.id JOIN regions AS r ON u.region = r.id WHERE r.id = 1 AND i.price > 2",
		},
	} {
		s, err := ParseStatement("q", tc.src)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		if got := roundTrip(t, s); got != tc.printed {
			t.Errorf("%s\n got  %s\n want %s", tc.src, got, tc.printed)
		}
	}
}

// TestParameterize: every constant a statement compares or writes becomes a
// `?`, numbered in source order with the statement's own parameters.
func TestParameterize(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"SELECT * FROM r WHERE a = 1 AND b IN ($1, 'x') AND NOT c BETWEEN 2 AND $2 AND d IS NULL LIMIT 5",
			"SELECT * FROM r WHERE a = ? AND b IN (?, ?) AND NOT c BETWEEN ? AND ? AND d IS NULL LIMIT 5"},
		{"SELECT * FROM r JOIN s ON s.f = r.id WHERE 3 < r.a OR r.b = TRUE", "SELECT * FROM r JOIN s ON s.f = r.id WHERE ? < r.a OR r.b = ?"},
		{"SELECT * FROM r WHERE a = $1 ORDER BY b LIMIT $2", "SELECT * FROM r WHERE a = ? ORDER BY b LIMIT ?"},
		{"INSERT INTO r (a, b) VALUES (1, ?), (NULL, x'00')", "INSERT INTO r (a, b) VALUES (?, ?), (?, ?)"},
		{"INSERT INTO r SET a = 'x' AND CONNECT TO f(2)", "INSERT INTO r SET a = ? AND CONNECT TO f(?)"},
		{"UPDATE r SET a = 1.5, b = $2 WHERE c = $1", "UPDATE r SET a = ?, b = ? WHERE c = ?"},
		{"DELETE FROM r WHERE a = TIMESTAMP '2024-01-02 03:04:05'", "DELETE FROM r WHERE a = ?"},
		{"CONNECT r(1) TO f(2)", "CONNECT r(?) TO f(?)"},
		{"EXPLAIN SELECT * FROM r WHERE a = 'k'", "EXPLAIN SELECT * FROM r WHERE a = ?"},
	} {
		s, err := ParseStatement("q", tc.src)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		Parameterize(s)
		if got := roundTrip(t, s); got != tc.want {
			t.Errorf("%s\n got  %s\n want %s", tc.src, got, tc.want)
		}
		if n := CountParams(s); n != strings.Count(tc.want, "?") {
			t.Errorf("%s: %d parameters", tc.want, n)
		}
	}
}

// TestParseStatementAt: positions count from where the statement starts.
func TestParseStatementAt(t *testing.T) {
	at := Pos{File: "q.log", Line: 7, Col: 5}
	for _, tc := range []struct{ src, want string }{
		{"SELECT * FROM r WHERE", "q.log:7:26: expected expression, found end of input"},
		{"SELECT *\nFROM r WHERE", "q.log:8:13: expected expression, found end of input"},
		{"SELECT * FROM r WHERE a = 'x", "q.log:7:31: unterminated string literal"},
	} {
		_, err := ParseStatementAt(at, tc.src)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: got %v, want %s", tc.src, err, tc.want)
		}
	}
	s, err := ParseStatementAt(at, "SELECT a FROM r")
	if err != nil {
		t.Fatal(err)
	}
	if sel := s.(*Select); sel.At != at || sel.RelationAt != (Pos{"q.log", 7, 19}) {
		t.Errorf("positions %v %v", sel.At, sel.RelationAt)
	}
}

// TestSeed000Golden: seed 000's input example (Source code 2), its CREATE
// TABLE as written there, reads as this DEFINE RELATION.
func TestSeed000Golden(t *testing.T) {
	src, err := os.ReadFile("testdata/seed000_source2.sql")
	if err != nil {
		t.Fatal(err)
	}
	ss, notes, err := ParseModel("seed000_source2.sql", src)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 0 {
		t.Errorf("notes: %v", notes)
	}
	got := PrintScript(ss)
	const golden = "testdata/seed000_source2.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// checkModel parses a model file and compares its notes (as printed) and
// statements with the wanted ones; it returns the notes.
func checkModel(t *testing.T, file, src string, want []string, wantStmts []Statement) []Note {
	t.Helper()
	ss, notes, err := ParseModel(file, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range notes {
		got = append(got, n.String())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	if !EqualIgnoringPos(ss, wantStmts) {
		t.Errorf("statements (-got +want):\n%s", diffIgnoringPos(ss, wantStmts))
	}
	return notes
}
