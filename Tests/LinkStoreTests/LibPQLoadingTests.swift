import Testing

@testable import Database

/// libpq is opened when a PostgreSQL store is first used, not linked: a machine without it runs every
/// command but that one, and that one says what is missing and how to get it.
@Suite("libpq, opened when PostgreSQL is first used")
struct LibPQLoadingTests {
    @Test("The system's libpq opens and has every function the connection calls")
    func systemLibrary() throws {
        let table = try LibPQ.load(LibPQ.names).get()
        // PQntuples answers 0 for no result: the pointer found by name is libpq's function.
        #expect(table.ntuples(nil) == 0)
    }

    @Test("No libpq on the machine: the error names the library and how to install it")
    func missing() {
        guard case .failure(let error) = LibPQ.load(["libpq-not-installed.so.5"]) else {
            Issue.record("a library that does not exist was opened")
            return
        }
        #expect(error.message.contains("libpq-not-installed.so.5"), "\(error.message)")
        #expect(error.message.contains("apt-get install libpq5"), "\(error.message)")
    }

    @Test("A library that is not libpq is refused with the functions it lacks")
    func notLibPQ() {
        guard case .failure(let error) = LibPQ.load(["libz.so.1"]) else {
            Issue.record("zlib was taken for libpq")
            return
        }
        #expect(error.message.contains("libz.so.1 lacks PQconnectdbParams, PQstatus"), "\(error.message)")
    }

    @Test("A connection through the opened library fails in libpq's words when no server answers")
    func refusedConnection() {
        #expect(throws: DatabaseError.self) {
            _ = try PostgresConnection(connection: "host=127.0.0.1 port=1 dbname=none", password: nil, connectSeconds: 2)
        }
        do {
            _ = try PostgresConnection(connection: "host=127.0.0.1 port=1 dbname=none", password: nil, connectSeconds: 2)
        } catch {
            #expect(error.message.hasPrefix("PostgreSQL: ") && error.message.contains("127.0.0.1"), "\(error.message)")
        }
    }
}
