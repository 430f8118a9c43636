import GatehouseStore

// The PostgreSQL store is being written (issue 6).
enum PostgresStorePlaceholder {}
