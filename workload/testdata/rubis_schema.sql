--
-- RUBiS, the relational schema as pg_dump --schema-only writes it, with
-- kvschema's statistics as annotation comments: ROWS on each CREATE TABLE
-- line, SIZE and CARDINALITY on the columns' lines, REVERSE on the ALTER
-- TABLE … FOREIGN KEY statements whose derived reverse name (the
-- referencing table's) is not RUBiS's. The same model as
-- examples/rubis/model.kvs.
--

SET statement_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET default_tablespace = '';
SET default_table_access_method = heap;

CREATE TABLE public.categories ( -- ROWS 50
    id integer NOT NULL, -- SIZE 16
    name character varying(20) NOT NULL, -- SIZE 20 CARDINALITY 50
    dummy integer DEFAULT 1 NOT NULL -- SIZE 8 CARDINALITY 1
);

ALTER TABLE public.categories OWNER TO rubis;

CREATE TABLE public.regions ( -- ROWS 5
    id integer NOT NULL, -- SIZE 16
    name character varying(25) NOT NULL, -- SIZE 25 CARDINALITY 5
    dummy integer DEFAULT 1 NOT NULL -- SIZE 8 CARDINALITY 1
);

ALTER TABLE public.regions OWNER TO rubis;

CREATE TABLE public.users ( -- ROWS 2000
    id integer NOT NULL, -- SIZE 16
    firstname character varying(20), -- SIZE 6 CARDINALITY 2000
    lastname character varying(20), -- SIZE 7 CARDINALITY 2000
    nickname character varying(20) NOT NULL, -- SIZE 12 CARDINALITY 2000
    password character varying(20) NOT NULL, -- SIZE 15 CARDINALITY 2000
    email character varying(50) NOT NULL, -- SIZE 23 CARDINALITY 2000
    rating integer, -- SIZE 8 CARDINALITY 50
    balance double precision, -- SIZE 8 CARDINALITY 10000
    creation_date timestamp without time zone, -- SIZE 8 CARDINALITY 2000
    region integer NOT NULL -- SIZE 16
);

ALTER TABLE public.users OWNER TO rubis;

CREATE SEQUENCE public.users_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.users_id_seq OWNED BY public.users.id;

CREATE TABLE public.items ( -- ROWS 20000
    id integer NOT NULL, -- SIZE 16
    name character varying(100), -- SIZE 19 CARDINALITY 20000
    description text, -- SIZE 197 CARDINALITY 20000
    initial_price numeric(10,2) NOT NULL, -- SIZE 8 CARDINALITY 20000
    quantity integer NOT NULL, -- SIZE 8 CARDINALITY 100
    reserve_price numeric(10,2) DEFAULT 0, -- SIZE 8 CARDINALITY 20000
    buy_now numeric(10,2) DEFAULT 0, -- SIZE 8 CARDINALITY 20000
    nb_of_bids integer DEFAULT 0, -- SIZE 8 CARDINALITY 100
    max_bid numeric(10,2) DEFAULT 0, -- SIZE 8 CARDINALITY 20000
    start_date timestamp without time zone, -- SIZE 8 CARDINALITY 20000
    end_date timestamp without time zone, -- SIZE 8 CARDINALITY 20000
    seller integer NOT NULL, -- SIZE 16
    category integer NOT NULL, -- SIZE 16
    CONSTRAINT items_quantity_check CHECK ((quantity >= 0))
);

ALTER TABLE public.items OWNER TO rubis;

CREATE TABLE public.bids ( -- ROWS 200000
    id integer NOT NULL, -- SIZE 16
    qty integer NOT NULL, -- SIZE 8 CARDINALITY 5
    bid numeric(10,2) NOT NULL, -- SIZE 8 CARDINALITY 200000
    date timestamp without time zone, -- SIZE 8 CARDINALITY 200000
    "user" integer NOT NULL, -- SIZE 16
    item integer NOT NULL -- SIZE 16
);

ALTER TABLE public.bids OWNER TO rubis;

CREATE TABLE public.comments ( -- ROWS 100000
    id integer NOT NULL, -- SIZE 16
    rating integer, -- SIZE 8 CARDINALITY 10
    date timestamp without time zone, -- SIZE 8 CARDINALITY 100000
    comment text, -- SIZE 130 CARDINALITY 100000
    from_user integer NOT NULL, -- SIZE 16
    to_user integer NOT NULL, -- SIZE 16
    item integer NOT NULL -- SIZE 16
);

ALTER TABLE public.comments OWNER TO rubis;

CREATE TABLE public.buynow ( -- ROWS 40000
    id integer NOT NULL, -- SIZE 16
    qty integer NOT NULL, -- SIZE 8 CARDINALITY 4
    date timestamp without time zone, -- SIZE 8 CARDINALITY 40000
    buyer integer NOT NULL, -- SIZE 16
    item integer NOT NULL -- SIZE 16
);

ALTER TABLE public.buynow OWNER TO rubis;

ALTER TABLE ONLY public.users ALTER COLUMN id SET DEFAULT nextval('public.users_id_seq'::regclass);

ALTER TABLE ONLY public.bids
    ADD CONSTRAINT bids_pkey PRIMARY KEY (id);
ALTER TABLE ONLY public.buynow
    ADD CONSTRAINT buynow_pkey PRIMARY KEY (id);
ALTER TABLE ONLY public.categories
    ADD CONSTRAINT categories_pkey PRIMARY KEY (id);
ALTER TABLE ONLY public.comments
    ADD CONSTRAINT comments_pkey PRIMARY KEY (id);
ALTER TABLE ONLY public.items
    ADD CONSTRAINT items_pkey PRIMARY KEY (id);
ALTER TABLE ONLY public.regions
    ADD CONSTRAINT regions_pkey PRIMARY KEY (id);
ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);
ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_nickname_key UNIQUE (nickname);

CREATE INDEX bids_item ON public.bids USING btree (item);
CREATE INDEX items_category ON public.items USING btree (category);

ALTER TABLE ONLY public.bids
    ADD CONSTRAINT bids_item_fkey FOREIGN KEY (item) REFERENCES public.items(id);
ALTER TABLE ONLY public.bids
    ADD CONSTRAINT bids_user_fkey FOREIGN KEY ("user") REFERENCES public.users(id);
ALTER TABLE ONLY public.buynow -- REVERSE bought_now
    ADD CONSTRAINT buynow_buyer_fkey FOREIGN KEY (buyer) REFERENCES public.users(id);
ALTER TABLE ONLY public.buynow -- REVERSE bought_now
    ADD CONSTRAINT buynow_item_fkey FOREIGN KEY (item) REFERENCES public.items(id);
ALTER TABLE ONLY public.comments -- REVERSE comments_sent
    ADD CONSTRAINT comments_from_user_fkey FOREIGN KEY (from_user) REFERENCES public.users(id);
ALTER TABLE ONLY public.comments -- REVERSE comments_received
    ADD CONSTRAINT comments_to_user_fkey FOREIGN KEY (to_user) REFERENCES public.users(id);
ALTER TABLE ONLY public.comments
    ADD CONSTRAINT comments_item_fkey FOREIGN KEY (item) REFERENCES public.items(id);
ALTER TABLE ONLY public.items
    ADD CONSTRAINT items_category_fkey FOREIGN KEY (category) REFERENCES public.categories(id);
ALTER TABLE ONLY public.items
    ADD CONSTRAINT items_seller_fkey FOREIGN KEY (seller) REFERENCES public.users(id); -- REVERSE items_sold
ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_region_fkey FOREIGN KEY (region) REFERENCES public.regions(id);
