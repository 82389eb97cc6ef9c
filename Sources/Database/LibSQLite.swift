internal import CSQLite
import Posix

/// SQLite's functions, found in the library when the first link-store connection opens. The binary does
/// not link libsqlite3: linked, it was loaded and relocated at every start of every command (1,600 symbol
/// bindings, a fifth of the dynamic loader's work) for the servers that keep a link store, which most
/// AASA hosts do not. A machine without libsqlite3 runs everything else; a SQLite store there fails to
/// open, in words.
struct LibSQLite: @unchecked Sendable {
    // Function pointers into a library that is never closed: immutable, callable from any thread.
    let openV2: @convention(c) (UnsafePointer<CChar>?, UnsafeMutablePointer<OpaquePointer?>?, Int32, UnsafePointer<CChar>?) -> Int32
    let errmsg: @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
    let closeV2: @convention(c) (OpaquePointer?) -> Int32
    let extendedResultCodes: @convention(c) (OpaquePointer?, Int32) -> Int32
    let busyTimeout: @convention(c) (OpaquePointer?, Int32) -> Int32
    let finalize: @convention(c) (OpaquePointer?) -> Int32
    let reset: @convention(c) (OpaquePointer?) -> Int32
    let clearBindings: @convention(c) (OpaquePointer?) -> Int32
    let exec:
        @convention(c) (
            OpaquePointer?, UnsafePointer<CChar>?, sqlite3_callback?, UnsafeMutableRawPointer?,
            UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        ) -> Int32
    let free: @convention(c) (UnsafeMutableRawPointer?) -> Void
    let prepareV2:
        @convention(c) (
            OpaquePointer?, UnsafePointer<CChar>?, Int32, UnsafeMutablePointer<OpaquePointer?>?,
            UnsafeMutablePointer<UnsafePointer<CChar>?>?
        ) -> Int32
    let changes: @convention(c) (OpaquePointer?) -> Int32
    let bindText: @convention(c) (OpaquePointer?, Int32, UnsafePointer<CChar>?, Int32, sqlite3_destructor_type?) -> Int32
    let bindInt64: @convention(c) (OpaquePointer?, Int32, sqlite3_int64) -> Int32
    let step: @convention(c) (OpaquePointer?) -> Int32
    let columnInt64: @convention(c) (OpaquePointer?, Int32) -> sqlite3_int64
    let columnText: @convention(c) (OpaquePointer?, Int32) -> UnsafePointer<UInt8>?
    let columnBytes: @convention(c) (OpaquePointer?, Int32) -> Int32

    /// Debian's libsqlite3-0 (and every other distribution's) installs the library under its soname.
    static let names = ["libsqlite3.so.0", "libsqlite3.so"]

    static let functionNames = [
        "sqlite3_open_v2",
        "sqlite3_errmsg",
        "sqlite3_close_v2",
        "sqlite3_extended_result_codes",
        "sqlite3_busy_timeout",
        "sqlite3_finalize",
        "sqlite3_reset",
        "sqlite3_clear_bindings",
        "sqlite3_exec",
        "sqlite3_free",
        "sqlite3_prepare_v2",
        "sqlite3_changes",
        "sqlite3_bind_text",
        "sqlite3_bind_int64",
        "sqlite3_step",
        "sqlite3_column_int64",
        "sqlite3_column_text",
        "sqlite3_column_bytes",
    ]

    /// Opened once, on first use, by whichever thread opens a store first.
    static let shared: Result<LibSQLite, DatabaseError> = load(names)

    static func load(_ names: [String]) -> Result<LibSQLite, DatabaseError> {
        let library: SharedLibrary
        switch RuntimeLibrary.open(
            names,
            requiring: functionNames,
            store: "SQLite",
            library: "libsqlite3",
            role: "the link store's database library",
            install: "install it (Debian and Ubuntu: apt-get install libsqlite3-0)"
        ) {
        case .success(let opened): library = opened
        case .failure(let error): return .failure(error)
        }
        func function<T>(_ name: String) -> T { library.function(name) }
        return .success(
            LibSQLite(
                openV2: function("sqlite3_open_v2"),
                errmsg: function("sqlite3_errmsg"),
                closeV2: function("sqlite3_close_v2"),
                extendedResultCodes: function("sqlite3_extended_result_codes"),
                busyTimeout: function("sqlite3_busy_timeout"),
                finalize: function("sqlite3_finalize"),
                reset: function("sqlite3_reset"),
                clearBindings: function("sqlite3_clear_bindings"),
                exec: function("sqlite3_exec"),
                free: function("sqlite3_free"),
                prepareV2: function("sqlite3_prepare_v2"),
                changes: function("sqlite3_changes"),
                bindText: function("sqlite3_bind_text"),
                bindInt64: function("sqlite3_bind_int64"),
                step: function("sqlite3_step"),
                columnInt64: function("sqlite3_column_int64"),
                columnText: function("sqlite3_column_text"),
                columnBytes: function("sqlite3_column_bytes")
            )
        )
    }
}
