internal import CPostgreSQL
import Posix

/// libpq's functions, found in the library when the first PostgreSQL connection is made. The binary does
/// not link libpq: linking it loads libpq and the seventeen libraries it needs (Kerberos, LDAP, GnuTLS…)
/// at every start of every command — about 2.3 ms of CPU — for the few servers that use PostgreSQL. A
/// machine without libpq runs everything else; a PostgreSQL store there fails to connect, in words.
struct LibPQ: @unchecked Sendable {
    // Function pointers into a library that is never closed: immutable, callable from any thread.
    typealias Strings = UnsafePointer<UnsafePointer<CChar>?>?

    let connectdbParams: @convention(c) (Strings, Strings, Int32) -> OpaquePointer?
    let status: @convention(c) (OpaquePointer?) -> ConnStatusType
    let errorMessage: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    let finish: @convention(c) (OpaquePointer?) -> Void
    let setNoticeProcessor: @convention(c) (OpaquePointer?, PQnoticeProcessor?, UnsafeMutableRawPointer?) -> PQnoticeProcessor?
    let host: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    let user: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    let port: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    let db: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    let resultErrorField: @convention(c) (OpaquePointer?, Int32) -> UnsafeMutablePointer<CChar>?
    let resultErrorMessage: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    let exec: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> OpaquePointer?
    let execParams:
        @convention(c) (
            OpaquePointer?, UnsafePointer<CChar>?, Int32, UnsafePointer<Oid>?, Strings, UnsafePointer<Int32>?, UnsafePointer<Int32>?, Int32
        ) -> OpaquePointer?
    let clear: @convention(c) (OpaquePointer?) -> Void
    let resultStatus: @convention(c) (OpaquePointer?) -> ExecStatusType
    let cmdTuples: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    let socket: @convention(c) (OpaquePointer?) -> Int32
    let consumeInput: @convention(c) (OpaquePointer?) -> Int32
    let notifies: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<PGnotify>?
    let freemem: @convention(c) (UnsafeMutableRawPointer?) -> Void
    let ntuples: @convention(c) (OpaquePointer?) -> Int32
    let getvalue: @convention(c) (OpaquePointer?, Int32, Int32) -> UnsafeMutablePointer<CChar>?
    let getlength: @convention(c) (OpaquePointer?, Int32, Int32) -> Int32

    /// Debian's libpq5 (and every other distribution's) installs the library under its soname.
    static let names = ["libpq.so.5", "libpq.so"]

    static let functionNames = [
        "PQconnectdbParams",
        "PQstatus",
        "PQerrorMessage",
        "PQfinish",
        "PQsetNoticeProcessor",
        "PQhost",
        "PQuser",
        "PQport",
        "PQdb",
        "PQresultErrorField",
        "PQresultErrorMessage",
        "PQexec",
        "PQexecParams",
        "PQclear",
        "PQresultStatus",
        "PQcmdTuples",
        "PQsocket",
        "PQconsumeInput",
        "PQnotifies",
        "PQfreemem",
        "PQntuples",
        "PQgetvalue",
        "PQgetlength",
    ]

    /// Opened once, on first use, by whichever thread connects first.
    static let shared: Result<LibPQ, DatabaseError> = load(names)

    static func load(_ names: [String]) -> Result<LibPQ, DatabaseError> {
        let library: SharedLibrary
        switch RuntimeLibrary.open(
            names,
            requiring: functionNames,
            store: "PostgreSQL",
            library: "libpq",
            role: "PostgreSQL's client library",
            install: "install it (Debian and Ubuntu: apt-get install libpq5) or use the SQLite store"
        ) {
        case .success(let opened): library = opened
        case .failure(let error): return .failure(error)
        }
        func function<T>(_ name: String) -> T { library.function(name) }
        let table = LibPQ(
            connectdbParams: function("PQconnectdbParams"),
            status: function("PQstatus"),
            errorMessage: function("PQerrorMessage"),
            finish: function("PQfinish"),
            setNoticeProcessor: function("PQsetNoticeProcessor"),
            host: function("PQhost"),
            user: function("PQuser"),
            port: function("PQport"),
            db: function("PQdb"),
            resultErrorField: function("PQresultErrorField"),
            resultErrorMessage: function("PQresultErrorMessage"),
            exec: function("PQexec"),
            execParams: function("PQexecParams"),
            clear: function("PQclear"),
            resultStatus: function("PQresultStatus"),
            cmdTuples: function("PQcmdTuples"),
            socket: function("PQsocket"),
            consumeInput: function("PQconsumeInput"),
            notifies: function("PQnotifies"),
            freemem: function("PQfreemem"),
            ntuples: function("PQntuples"),
            getvalue: function("PQgetvalue"),
            getlength: function("PQgetlength")
        )
        return .success(table)
    }
}
