internal import CPostgreSQL

/// One connection to a PostgreSQL server through libpq: the only code that calls libpq. Not shared
/// between threads (each user opens its own: the server's link watcher, its API worker and the command
/// line each hold one, a pool that never puts an event loop in front of the database). Statements send
/// their parameters apart from the SQL (PQexecParams), never pasted into it.
public final class PostgresConnection: DatabaseConnection {
    public let dialect = SQLDialect.postgres
    public let name: String
    private let handle: OpaquePointer
    fileprivate let pq: LibPQ
    public fileprivate(set) var changes = 0
    public var transactionDepth = 0

    /// Every server of one store takes this advisory lock for each write transaction: writes commit one
    /// after another, so a revision number is never committed after a larger one (a replica reading
    /// "what changed after revision N" would otherwise miss it), as SQLite's single writer guarantees.
    static let writeLock: Int64 = 0x4141_5341_4C4B
    public let beginWriting = "BEGIN; SELECT pg_advisory_xact_lock(\(PostgresConnection.writeLock))"

    /// Connects with libpq's connection string (`host=… port=… dbname=… user=…` or a `postgresql://` URI);
    /// `password`, read from the config's password file, is handed to libpq apart from it. Waits at most
    /// `connectSeconds` unless the string says otherwise.
    public init(connection: String, password: String?, connectSeconds: Int = 5) throws(DatabaseError) {
        // Later keywords win over earlier ones, and the expanded string counts at its place: the string
        // may set its own timeout, but the password comes only from the file.
        var pairs = [("connect_timeout", String(connectSeconds)), ("application_name", "aasa-server"), ("dbname", connection)]
        if let password { pairs.append(("password", password)) }
        pq = try LibPQ.shared.get()
        let keywords = CStrings(pairs.map(\.0))
        let values = CStrings(pairs.map(\.1))
        let connected = pq.connectdbParams(keywords.pointers, values.pointers, 1)
        guard let connected else { throw DatabaseError(code: 1, message: "PostgreSQL: out of memory") }
        guard pq.status(connected) == CONNECTION_OK else {
            let message = Self.trimmed(pq.errorMessage(connected))
            pq.finish(connected)
            throw DatabaseError(code: 1, message: "PostgreSQL: \(message)")
        }
        handle = connected
        // NOTICEs (a table that already exists…) are not ours to print on the server's stderr.
        _ = pq.setNoticeProcessor(handle, { _, _ in }, nil)
        let host = pq.host(handle).map { String(cString: $0) } ?? ""
        let shownHost = host.hasPrefix("/") ? "[\(host)]" : host
        name =
            "postgresql://\(pq.user(handle).map { String(cString: $0) } ?? "")@\(shownHost):\(pq.port(handle).map { String(cString: $0) } ?? "")/\(pq.db(handle).map { String(cString: $0) } ?? "")"
        // A write waiting on another's lock, or a statement stuck on a sick server, fails in words instead
        // of holding the thread forever.
        try execute("SET lock_timeout = '10s'; SET statement_timeout = '60s'")
    }

    deinit { pq.finish(handle) }

    fileprivate static func trimmed(_ message: UnsafePointer<CChar>?) -> String {
        guard let message else { return "unknown error" }
        return String(cString: message).split(whereSeparator: \.isNewline).joined(separator: "; ")
    }

    func error(_ result: OpaquePointer?) -> DatabaseError {
        let state = result.flatMap { pq.resultErrorField($0, Int32(UInt8(ascii: "C"))) }.map { String(cString: $0) }
        let message = Self.trimmed(result.map { pq.resultErrorMessage($0) } ?? pq.errorMessage(handle))
        return DatabaseError(code: 1, message: "\(name): \(message)\(state.map { " (SQLSTATE \($0))" } ?? "")")
    }

    public func execute(_ sql: String) throws(DatabaseError) {
        let result = pq.exec(handle, sql)
        defer { pq.clear(result) }
        let status = result.map { pq.resultStatus($0) } ?? PGRES_FATAL_ERROR
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else { throw error(result) }
    }

    public func prepare(_ sql: String) throws(DatabaseError) -> any DatabaseStatement {
        PostgresStatement(Self.numberedParameters(sql), connection: self)
    }

    /// `?1` → `$1`: the link store writes its SQL once, in SQLite's spelling. Its SQL has no `?` in a
    /// literal, so every `?` before a digit is a parameter.
    static func numberedParameters(_ sql: String) -> String {
        var bytes = Array(sql.utf8)
        for index in bytes.indices.dropLast() where bytes[index] == UInt8(ascii: "?") && (0x30...0x39).contains(bytes[index + 1]) {
            bytes[index] = UInt8(ascii: "$")
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Asks the server to tell this connection of every `NOTIFY channel`; the returned socket turns
    /// readable when one arrives (wait on it beside others, then ``takeNotifications()``).
    public func listen(_ channel: String) throws(DatabaseError) -> Int32 {
        try execute("LISTEN \(channel)")
        return pq.socket(handle)
    }

    /// Reads what the server sent without waiting; true when a notification was among it. A connection
    /// the server closed reads as an error, so the listener connects again.
    public func takeNotifications() throws(DatabaseError) -> Bool {
        guard pq.consumeInput(handle) == 1 else {
            throw DatabaseError(code: 1, message: "\(name): \(Self.trimmed(pq.errorMessage(handle)))")
        }
        var any = false
        while let notification = pq.notifies(handle) {
            any = true
            pq.freemem(notification)
        }
        return any
    }

    public func schemaVersion() throws(DatabaseError) -> Int64 {
        guard try integer("SELECT (to_regclass('aasa_link_schema') IS NOT NULL)::int") == 1 else { return 0 }
        return try integer("SELECT coalesce(max(version), 0) FROM aasa_link_schema")
    }

    public func setSchemaVersion(_ version: Int64) throws(DatabaseError) {
        try execute(
            """
            CREATE TABLE IF NOT EXISTS aasa_link_schema (version BIGINT NOT NULL);
            DELETE FROM aasa_link_schema;
            INSERT INTO aasa_link_schema (version) VALUES (\(version))
            """
        )
    }

    fileprivate func run(_ sql: String, _ parameters: [(type: UInt32, value: String)]) throws(DatabaseError) -> OpaquePointer {
        let values = CStrings(parameters.map(\.value))
        let result = parameters.map(\.type).withUnsafeBufferPointer { types in
            pq.execParams(handle, sql, Int32(parameters.count), types.baseAddress, values.pointers, nil, nil, 0)
        }
        let status = result.map { pq.resultStatus($0) } ?? PGRES_FATAL_ERROR
        guard let result, status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let failure = error(result)
            pq.clear(result)
            throw failure
        }
        changes = pq.cmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0
        return result
    }
}

/// A statement's parameters, collected until its first step runs it; its rows are then read from the
/// result libpq holds (as text: the store's values are text and 64-bit integers).
final class PostgresStatement: DatabaseStatement {
    private let sql: String
    private let connection: PostgresConnection
    private var pq: LibPQ { connection.pq }
    private var parameters: [(type: UInt32, value: String)] = []
    private var result: OpaquePointer?
    private var row: Int32 = -1

    /// PostgreSQL's type ids for text and bigint: with the types given, `?1 = ''` or `LIMIT ?2` need no cast.
    private static let textType: UInt32 = 25
    private static let bigintType: UInt32 = 20

    fileprivate init(_ sql: String, connection: PostgresConnection) {
        self.sql = sql
        self.connection = connection
    }

    deinit { pq.clear(result) }

    private func set(_ index: Int32, _ parameter: (type: UInt32, value: String)) {
        let position = Int(index) - 1
        while parameters.count <= position { parameters.append((Self.textType, "")) }
        parameters[position] = parameter
    }

    public func bind(_ index: Int32, _ text: String) throws(DatabaseError) {
        // libpq takes C strings: a NUL would cut the text short, silently. PostgreSQL's text cannot hold one.
        guard !text.utf8.contains(0) else {
            throw DatabaseError(code: 1, message: "\(connection.name): text with a NUL character cannot be stored in PostgreSQL")
        }
        set(index, (Self.textType, text))
    }

    public func bind(_ index: Int32, _ value: Int64) throws(DatabaseError) { set(index, (Self.bigintType, String(value))) }

    @discardableResult
    public func step() throws(DatabaseError) -> Bool {
        if result == nil {
            result = try connection.run(sql, parameters)
            row = -1
        }
        row += 1
        return row < pq.ntuples(result)
    }

    public func reset() {
        pq.clear(result)
        result = nil
        parameters.removeAll(keepingCapacity: true)
    }

    public func integer(_ column: Int32) -> Int64 { Int64(text(column)) ?? 0 }

    public func text(_ column: Int32) -> String {
        guard let result, let bytes = pq.getvalue(result, row, column) else { return "" }
        let count = Int(pq.getlength(result, row, column))
        return bytes.withMemoryRebound(to: UInt8.self, capacity: count) {
            String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
        }
    }
}

/// C strings for libpq's arrays of `const char *`, in one allocation that lives as long as this value,
/// followed by a null pointer (the keyword arrays end with one).
private final class CStrings {
    private let storage: UnsafeMutablePointer<CChar>
    let pointers: UnsafeMutablePointer<UnsafePointer<CChar>?>

    init(_ strings: [String]) {
        let total = strings.reduce(0) { $0 + $1.utf8.count + 1 }
        storage = .allocate(capacity: max(total, 1))
        pointers = .allocate(capacity: strings.count + 1)
        var offset = 0
        for (index, string) in strings.enumerated() {
            let start = storage + offset
            for byte in string.utf8 {
                storage[offset] = CChar(bitPattern: byte)
                offset += 1
            }
            storage[offset] = 0
            offset += 1
            pointers[index] = UnsafePointer(start)
        }
        pointers[strings.count] = nil
    }

    deinit {
        storage.deallocate()
        pointers.deallocate()
    }
}
