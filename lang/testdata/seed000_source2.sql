--user エンティティ
CREATE TABLE user(
    id integer PRIMARY KEY,
    firstname text,
    lastname text,
    password text );
