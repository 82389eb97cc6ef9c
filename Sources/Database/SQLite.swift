internal import CSQLite

/// One connection to a SQLite database file: the only code that calls SQLite. Not shared between
/// threads (each user opens its own); statements are prepared with bound parameters only, never text
/// pasted into SQL.
public final class SQLiteConnection: DatabaseConnection {
    public let dialect = SQLDialect.sqlite
    public var name: String { path }
    private let handle: OpaquePointer
    public let path: String
    fileprivate let sqlite: LibSQLite

    /// Opens (creating when `create`) the file; `busyMilliseconds` is how long a write waits for another
    /// connection's lock before failing with SQLITE_BUSY.
    public init(path: String, create: Bool, readOnly: Bool = false, busyMilliseconds: Int32 = 5_000) throws(DatabaseError) {
        let sqlite = try LibSQLite.shared.get()
        var opened: OpaquePointer?
        let flags =
            (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0)) | SQLITE_OPEN_NOMUTEX
        let status = sqlite.openV2(path, &opened, flags, nil)
        guard status == SQLITE_OK, let opened else {
            let message = opened.flatMap { sqlite.errmsg($0).map { String(cString: $0) } } ?? "out of memory"
            _ = sqlite.closeV2(opened)
            throw DatabaseError(code: status, message: "cannot open \(path): \(message)")
        }
        handle = opened
        self.path = path
        self.sqlite = sqlite
        _ = sqlite.extendedResultCodes(handle, 1)
        _ = sqlite.busyTimeout(handle, busyMilliseconds)
    }

    deinit {
        for statements in idle.values { for statement in statements { _ = sqlite.finalize(statement) } }
        _ = sqlite.closeV2(handle)
    }

    /// Compiled statements no one holds, by their SQL: the store runs the same few statements for every
    /// link, and compiling one costs more than running it. A statement goes back here, reset, when its
    /// holder lets go, so two holders of the same SQL (one iterating while another runs) never share one.
    private var idle: [String: [OpaquePointer]] = [:]

    fileprivate func recycle(_ statement: OpaquePointer, sql: String) {
        _ = sqlite.reset(statement)
        _ = sqlite.clearBindings(statement)
        idle[sql, default: []].append(statement)
    }

    /// Statements without results or parameters (schema, pragmas, transactions).
    public func execute(_ sql: String) throws(DatabaseError) {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite.exec(handle, sql, nil, nil, &message)
        guard status == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? errorMessage
            sqlite.free(message)
            throw DatabaseError(code: status, message: "\(path): \(text)")
        }
    }

    public func prepare(_ sql: String) throws(DatabaseError) -> any DatabaseStatement {
        if let statement = idle[sql]?.popLast() { return SQLiteStatement(statement, sql: sql, connection: self) }
        var statement: OpaquePointer?
        let status = sqlite.prepareV2(handle, sql, -1, &statement, nil)
        guard status == SQLITE_OK, let statement else { throw error(status) }
        return SQLiteStatement(statement, sql: sql, connection: self)
    }

    /// BEGIN IMMEDIATE takes SQLite's write lock at the start, so two writers queue on the busy timeout
    /// instead of one failing halfway.
    public let beginWriting = "BEGIN IMMEDIATE"
    public var transactionDepth = 0

    /// Rows the last statement inserted, updated or deleted.
    public var changes: Int { Int(sqlite.changes(handle)) }

    public func schemaVersion() throws(DatabaseError) -> Int64 { try integer("PRAGMA user_version") }

    public func setSchemaVersion(_ version: Int64) throws(DatabaseError) { try execute("PRAGMA user_version = \(version)") }

    func error(_ status: Int32) -> DatabaseError {
        DatabaseError(code: status, message: "\(path): \(errorMessage)")
    }

    private var errorMessage: String { sqlite.errmsg(handle).map { String(cString: $0) } ?? "unknown error" }
}

/// A prepared statement: bind by position (1-based, as SQLite counts), step through rows. Given back to
/// its connection's idle statements when released.
final class SQLiteStatement: DatabaseStatement {
    private let statement: OpaquePointer
    private let sql: String
    private let connection: SQLiteConnection

    fileprivate init(_ statement: OpaquePointer, sql: String, connection: SQLiteConnection) {
        self.statement = statement
        self.sql = sql
        self.connection = connection
    }

    deinit { connection.recycle(statement, sql: sql) }

    public func bind(_ index: Int32, _ text: String) throws(DatabaseError) {
        let status = text.withCString { connection.sqlite.bindText(statement, index, $0, Int32(text.utf8.count), CSQLite_transient()) }
        guard status == SQLITE_OK else { throw connection.error(status) }
    }

    public func bind(_ index: Int32, _ value: Int64) throws(DatabaseError) {
        let status = connection.sqlite.bindInt64(statement, index, value)
        guard status == SQLITE_OK else { throw connection.error(status) }
    }

    /// True when a row is ready to read, false when the statement is done.
    @discardableResult
    public func step() throws(DatabaseError) -> Bool {
        let status = connection.sqlite.step(statement)
        switch status {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.error(status)
        }
    }

    public func reset() {
        _ = connection.sqlite.reset(statement)
        _ = connection.sqlite.clearBindings(statement)
    }

    public func integer(_ column: Int32) -> Int64 { connection.sqlite.columnInt64(statement, column) }

    public func text(_ column: Int32) -> String {
        guard let bytes = connection.sqlite.columnText(statement, column) else { return "" }
        let count = Int(connection.sqlite.columnBytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}
