import Database
import TestSupport
import Testing

/// SQLite's compiled statements are kept for the next use of the same SQL: a kept statement starts
/// fresh (no old row, no old binding), and two holders of the same SQL at once never share one.
@Suite("SQLite: statements kept for reuse")
struct SQLiteStatementTests {
    @Test("Two holders of one SQL iterate apart; a statement given back starts again from the first row, unbound")
    func reuse() throws {
        try withTemporaryDirectory { directory in
            let connection = try SQLiteConnection(path: directory + "/t.sqlite", create: true)
            try connection.execute("CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (1), (2), (3)")
            let sql = "SELECT v FROM t WHERE v >= ?1 ORDER BY v"
            func rows(_ statement: any DatabaseStatement) throws -> [Int64] {
                var values: [Int64] = []
                while try statement.step() { values.append(statement.integer(0)) }
                return values
            }
            do {
                let first = try connection.prepare(sql)
                try first.bind(1, 1)
                #expect(try first.step() && first.integer(0) == 1)
                let second = try connection.prepare(sql)
                try second.bind(1, 2)
                #expect(try rows(second) == [2, 3], "a second holder has a statement of its own")
                #expect(try rows(first) == [2, 3], "the first holder's iteration went on undisturbed")
            }
            // Both given back, mid-row or done: the next holder starts from the first row, with no binding
            // left (an unbound parameter is NULL: no row is >= NULL).
            let again = try connection.prepare(sql)
            #expect(try rows(again) == [])
            let bound = try connection.prepare(sql)
            try bound.bind(1, 3)
            #expect(try rows(bound) == [3])
        }
    }
}
