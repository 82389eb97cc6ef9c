import Foundation
import TestSupport
import Testing

@testable import Database

/// libsqlite3 is opened when a link store is first opened, not linked: a server without a store never
/// loads it, a machine without it runs every command but a SQLite store, and that one says what is missing.
@Suite("libsqlite3, opened when a link store is first opened")
struct LibSQLiteLoadingTests {
    @Test("The system's libsqlite3 opens and has every function the connection calls; a store works through it")
    func systemLibrary() throws {
        let table = try LibSQLite.load(LibSQLite.names).get()
        // sqlite3_changes of no connection: the pointer found by name is SQLite's own function, not a stub.
        #expect(table.errmsg(nil).map { String(cString: $0) } == "out of memory")
        try withTemporaryDirectory { directory in
            let connection = try SQLiteConnection(path: directory + "/store.db", create: true)
            try connection.execute("CREATE TABLE links (suffix TEXT NOT NULL, clicks INTEGER NOT NULL)")
            let insert = try connection.prepare("INSERT INTO links (suffix, clicks) VALUES (?1, ?2)")
            try insert.bind(1, "s42 ✓")
            try insert.bind(2, Int64(7))
            #expect(try insert.step() == false)
            #expect(connection.changes == 1)
            let select = try connection.prepare("SELECT suffix, clicks FROM links")
            #expect(try select.step())
            #expect(select.text(0) == "s42 ✓" && select.integer(1) == 7)
            #expect(throws: DatabaseError.self) { try connection.execute("SELECT * FROM no_such_table") }
        }
    }

    @Test("No libsqlite3 on the machine: the error names the library and how to install it")
    func missing() {
        guard case .failure(let error) = LibSQLite.load(["libsqlite3-not-installed.so.0"]) else {
            Issue.record("a library that does not exist was opened")
            return
        }
        #expect(error.message.contains("libsqlite3-not-installed.so.0"), "\(error.message)")
        #expect(error.message.contains("apt-get install libsqlite3-0"), "\(error.message)")
    }

    @Test("A library that is not SQLite is refused with the functions it lacks")
    func notSQLite() {
        guard case .failure(let error) = LibSQLite.load(["libz.so.1"]) else {
            Issue.record("zlib was taken for libsqlite3")
            return
        }
        #expect(error.message.contains("libz.so.1 lacks sqlite3_open_v2, sqlite3_errmsg"), "\(error.message)")
    }

    @Test("The server binary does not link libsqlite3 (nor libpq): both are opened when a store is used")
    func notLinked() throws {
        let binary = TestPaths.serverExecutable
        let dynamic = try runTool(["readelf", "--dynamic", binary])
        let needed = String(decoding: dynamic.stdout, as: UTF8.self).split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(!needed.isEmpty, "readelf lists the libraries the binary needs")
        #expect(!needed.contains { $0.contains("libsqlite3") }, "\(needed)")
        #expect(!needed.contains { $0.contains("libpq") }, "\(needed)")
    }
}
