mod schema_corpus;
