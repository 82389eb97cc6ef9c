public import AASA
public import Database
internal import Posix
internal import Support

/// Where the short links are kept: the embedded SQLite file of one server, or a PostgreSQL database that
/// replicas share.
public enum LinkStoreLocation: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    case postgres(PostgresLogin)

    public var isPostgres: Bool {
        if case .postgres = self { return true }
        return false
    }

    /// For logs: the file, or the connection string (which holds no password: the config refuses one).
    public var description: String {
        switch self {
        case .sqlite(let path): return path
        case .postgres(let login): return login.description
        }
    }
}

extension LinkStoreLocation {
    /// The store a config names: `server.linkStore.postgres` (its password read from `passwordFile`), else
    /// `links.sqlite` in `server.stateDirectory` (the directory made, 0700, when missing); nil when the
    /// config names neither.
    public static func configured(_ settings: ServerSettings, configPath: String) throws(LinkStoreError) -> LinkStoreLocation? {
        if let connection = settings.linkStorePostgres {
            do {
                let passwordFile = settings.linkStorePasswordFile.map { ConfigLoader.resolve($0, relativeTo: configPath) }
                return .postgres(try PostgresLogin.reading(connection: connection, passwordFile: passwordFile))
            } catch {
                throw .configuration(error.message)
            }
        }
        guard let directory = settings.stateDirectory else { return nil }
        let resolved = ConfigLoader.resolve(directory, relativeTo: configPath)
        if !Posix.isDirectory(resolved) { try? Posix.makeDirectories(resolved, mode: 0o700) }
        return .sqlite(path: resolved + "/" + LinkDatabase.fileName)
    }
}
