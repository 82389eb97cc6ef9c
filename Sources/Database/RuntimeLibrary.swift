import Posix

/// A store's C library, opened when a store in it is first used (``LibPQ``, ``LibSQLite``): both say in the
/// same words what is missing and how to get it.
enum RuntimeLibrary {
    /// `store` names the store in messages ("PostgreSQL"), `library` the library ("libpq"), `role` what it
    /// is ("PostgreSQL's client library"), `install` how to get it.
    static func open(
        _ names: [String],
        requiring functions: [String],
        store: String,
        library: String,
        role: String,
        install: String
    ) -> Result<SharedLibrary, DatabaseError> {
        switch SharedLibrary.open(names, requiring: functions) {
        case .success(let opened): return .success(opened)
        case .failure(.notFound(let error)):
            return .failure(DatabaseError(code: 1, message: "\(store): \(library), \(role), is not installed (\(error)); \(install)"))
        case .failure(.lacking(let name, let missing)):
            return .failure(
                DatabaseError(
                    code: 1,
                    message: "\(store): \(name) lacks \(missing.joined(separator: ", ")); it is not a \(library) this program can use"
                )
            )
        }
    }
}
