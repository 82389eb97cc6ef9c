public import AASA
internal import Posix
internal import Support

/// Where the short links are kept: the embedded SQLite file of one server, or a PostgreSQL database that
/// replicas share.
public enum LinkStoreLocation: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    case postgres(PostgresSettings)

    public struct PostgresSettings: Sendable, Equatable {
        /// libpq's connection string or URI, without a password.
        public var connection: String
        /// Read from the config's password file at start; never logged, never in a message.
        public var password: String?

        public init(connection: String, password: String?) {
            self.connection = connection
            self.password = password
        }
    }

    public var isPostgres: Bool {
        if case .postgres = self { return true }
        return false
    }

    /// For logs: the file, or the connection string (which holds no password: the config refuses one).
    public var description: String {
        switch self {
        case .sqlite(let path): return path
        case .postgres(let settings): return "PostgreSQL (\(settings.connection))"
        }
    }
}

extension LinkStoreLocation {
    /// The store a config names: `server.linkStore.postgres` (its password read from `passwordFile`), else
    /// `links.sqlite` in `server.stateDirectory` (the directory made, 0700, when missing); nil when the
    /// config names neither.
    public static func configured(_ settings: ServerSettings, configPath: String) throws(LinkStoreError) -> LinkStoreLocation? {
        if let connection = settings.linkStorePostgres {
            var password: String?
            if let file = settings.linkStorePasswordFile {
                let path = ConfigLoader.resolve(file, relativeTo: configPath)
                do {
                    let bytes = try Posix.readFile(path, limit: 4096)
                    password = String(decoding: bytes[...].trimmingASCIIWhitespace(), as: UTF8.self)
                } catch {
                    throw .configuration("cannot read server.linkStore.passwordFile \(path): \(error.message)")
                }
            }
            return .postgres(PostgresSettings(connection: connection, password: password))
        }
        guard let directory = settings.stateDirectory else { return nil }
        let resolved = ConfigLoader.resolve(directory, relativeTo: configPath)
        if !Posix.isDirectory(resolved) { try? Posix.makeDirectories(resolved, mode: 0o700) }
        return .sqlite(path: resolved + "/" + LinkDatabase.fileName)
    }
}
