internal import CSQLite

/// What SQLite said when a call failed: its result code and message, with what we were doing.
public struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: Int32
    public var message: String
    public var description: String { message }

    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    /// SQLITE_BUSY and SQLITE_LOCKED: another connection held the lock past the busy timeout.
    public var isBusy: Bool { code & 0xFF == SQLITE_BUSY || code & 0xFF == SQLITE_LOCKED }
    /// SQLITE_CONSTRAINT: a UNIQUE or CHECK constraint refused the row.
    public var isConstraint: Bool { code & 0xFF == SQLITE_CONSTRAINT }
}

/// One connection to a SQLite database file: the only code that calls SQLite. Not shared between
/// threads (each user opens its own); statements are prepared with bound parameters only, never text
/// pasted into SQL.
final class SQLiteConnection {
    private let handle: OpaquePointer
    let path: String

    /// Opens (creating when `create`) the file; `busyMilliseconds` is how long a write waits for another
    /// connection's lock before failing with SQLITE_BUSY.
    init(path: String, create: Bool, readOnly: Bool = false, busyMilliseconds: Int32 = 5_000) throws(SQLiteError) {
        var opened: OpaquePointer?
        let flags =
            (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0)) | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &opened, flags, nil)
        guard status == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(opened)
            throw SQLiteError(code: status, message: "cannot open \(path): \(message)")
        }
        handle = opened
        self.path = path
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, busyMilliseconds)
    }

    deinit { sqlite3_close_v2(handle) }

    /// Statements without results or parameters (schema, pragmas, transactions).
    func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        guard status == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(message)
            throw SQLiteError(code: status, message: "\(path): \(text)")
        }
    }

    func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard status == SQLITE_OK, let statement else { throw error(status) }
        return SQLiteStatement(statement, connection: self)
    }

    /// `body` inside BEGIN IMMEDIATE … COMMIT (the write lock taken at the start, so two writers queue
    /// on the busy timeout instead of one failing halfway); rolled back when it throws.
    /// Inside another transaction, `body` joins it (one batch of many changes commits once).
    func transaction<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        if transactionDepth > 0 {
            transactionDepth += 1
            defer { transactionDepth -= 1 }
            return try body()
        }
        try execute("BEGIN IMMEDIATE")
        transactionDepth = 1
        defer { transactionDepth = 0 }
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }
    private var transactionDepth = 0

    /// Rows the last statement inserted, updated or deleted.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// One integer from a query such as `PRAGMA user_version`.
    func integer(_ sql: String) throws(SQLiteError) -> Int64 {
        let statement = try prepare(sql)
        guard try statement.step() else { return 0 }
        return statement.integer(0)
    }

    func error(_ status: Int32) -> SQLiteError {
        SQLiteError(code: status, message: "\(path): \(String(cString: sqlite3_errmsg(handle)))")
    }
}

/// A prepared statement: bind by position (1-based, as SQLite counts), step through rows.
final class SQLiteStatement {
    private let statement: OpaquePointer
    private let connection: SQLiteConnection

    fileprivate init(_ statement: OpaquePointer, connection: SQLiteConnection) {
        self.statement = statement
        self.connection = connection
    }

    deinit { sqlite3_finalize(statement) }

    func bind(_ index: Int32, _ text: String) throws(SQLiteError) {
        let status = text.withCString { CSQLite_bind_text(statement, index, $0, Int32(text.utf8.count)) }
        guard status == SQLITE_OK else { throw connection.error(status) }
    }

    func bind(_ index: Int32, _ value: Int64) throws(SQLiteError) {
        let status = sqlite3_bind_int64(statement, index, value)
        guard status == SQLITE_OK else { throw connection.error(status) }
    }

    /// True when a row is ready to read, false when the statement is done.
    @discardableResult
    func step() throws(SQLiteError) -> Bool {
        let status = sqlite3_step(statement)
        switch status {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.error(status)
        }
    }

    func reset() {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
    }

    func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

    func text(_ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, column) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}
