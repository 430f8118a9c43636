import Foundation
import GatehousePostgres
import GatehouseStore
import Testing

/// What only the PostgreSQL store has: its URL, its migrations under concurrent start-up, its connection errors.
@Suite(.timeLimit(.minutes(3))) struct PostgresStoreTests {
    @Test func urlsAreParsedWithDefaultsAndOptions() throws {
        let full = try PostgresLocation(url: "postgres://gate%40house:p%3Ass@db.example:6543/gate_db?sslmode=require&pool_size=25&connect_timeout=3&idle_ping=45")
        #expect(full.host == "db.example")
        #expect(full.port == 6543)
        #expect(full.username == "gate@house")
        #expect(full.password == "p:ss")
        #expect(full.database == "gate_db")
        #expect(full.tls == .require)
        #expect(full.poolSize == 25)
        #expect(full.connectTimeout == .seconds(3))
        #expect(full.idlePing == .seconds(45))
        #expect(full.clientConfiguration.options.keepAliveBehavior?.frequency == .seconds(45))
        #expect(full.clientConfiguration.options.maximumConnections == 25)
        #expect(full.clientConfiguration.options.minimumConnections == 0, "no minimum: PostgresNIO 1.33 crashes below it (PostgresFaultTests)")
        #expect(full.description == "postgres://gate@house@db.example:6543/gate_db", "the password is never shown")

        let minimal = try PostgresLocation(url: "postgresql://127.0.0.1")
        #expect(minimal.username == "postgres")
        #expect(minimal.password == nil)
        #expect(minimal.port == 5432)
        #expect(minimal.database == "postgres")
        #expect(minimal.tls == .prefer)
        // A remote server without sslmode: TLS required, never silently clear.
        #expect(try PostgresLocation(url: "postgres://db.example/gate").tls == .require)
        #expect(try PostgresLocation(url: "postgres://10.0.0.5/gate").tls == .require)
        #expect(try PostgresLocation(url: "postgres://localhost/gate").tls == .prefer)
        #expect(try PostgresLocation(url: "postgres://db.example/gate?sslmode=disable").tls == .disable)
        #expect(minimal.poolSize == 10)
        #expect(minimal.idlePing == nil)
        #expect(minimal.clientConfiguration.options.keepAliveBehavior == nil, "no ping timer per query unless asked")
        #expect(try PostgresLocation(url: "postgres://h/db?idle_ping=0").idlePing == nil)

        let userDatabase = try PostgresLocation(url: "postgres://alice@[::1]:5433?sslmode=disable")
        #expect(userDatabase.host == "::1")
        #expect(userDatabase.database == "alice")
        #expect(userDatabase.tls == .disable)

        for bad in ["mysql://x/y", "postgres:///db", "postgres://h/a/b", "postgres://h/db?sslmode=sometimes", "postgres://h/db?pool_size=0",
                    "postgres://h/db?poolsize=3", "postgres://h/db?idle_ping=-1", "postgres://h/db?idle_ping=soon", "not a url"] {
            #expect(throws: PostgresStoreError.self, "\(bad)") { try PostgresLocation(url: bad) }
        }
    }

    @Test func nodesStartingTogetherMigrateOnce() async throws {
        try await TestPostgres.withDatabase { location in
            let stores = try await withThrowingTaskGroup(of: PostgresStore.self) { group in
                for _ in 0..<6 {
                    group.addTask { try await PostgresStore.connect(location, logger: TestPostgres.logger) }
                }
                return try await group.reduce(into: [PostgresStore]()) { $0.append($1) }
            }
            #expect(stores.count == 6)
            for store in stores {
                #expect(try await store.appliedMigrations() == ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8"])
            }
            // Every node sees the same tables at once.
            try await stores[0].createRegistration(StoreConformanceTests.registration("shared"))
            #expect(try await stores[5].registration(clientID: "shared") != nil)
            for store in stores { await store.shutdown() }

            // A later start finds nothing to do.
            let again = try await PostgresStore.connect(location, logger: TestPostgres.logger)
            #expect(try await again.appliedMigrations() == ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8"])
            #expect(try await again.registration(clientID: "shared") != nil)
            await again.shutdown()
        }
    }

    @Test func anUnreachableServerFailsWithinTheConnectTimeout() async throws {
        let start = ContinuousClock.now
        await #expect(throws: (any Error).self) {
            // Port 1 on loopback: nothing listens.
            _ = try await PostgresStore.connect(url: "postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=2", logger: TestPostgres.logger)
        }
        #expect(ContinuousClock.now - start < .seconds(10))
    }

    @Test func aMissingDatabaseFailsAtOnceWithTheServersError() async throws {
        let admin = try TestPostgres.adminLocation()
        let start = ContinuousClock.now
        let error = await #expect(throws: (any Error).self) {
            _ = try await PostgresStore.connect(admin.with(database: "gatehouse_no_such_database"), logger: TestPostgres.logger)
        }
        #expect(String(reflecting: error).contains("3D000"), "invalid_catalog_name")
        #expect(ContinuousClock.now - start < .seconds(9))
    }
}
