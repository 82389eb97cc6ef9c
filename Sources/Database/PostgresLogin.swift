import Posix
import Support

/// What a PostgreSQL connection is made from: libpq's connection string (which the config keeps free of
/// passwords) and the password, read from its own file. Shared by everything a config keeps in the
/// database (short links, ACME storage).
public struct PostgresLogin: Sendable, Equatable {
    /// libpq's connection string or URI, without a password.
    public var connection: String
    /// Never logged, never in a message.
    public var password: String?

    public init(connection: String, password: String?) {
        self.connection = connection
        self.password = password
    }

    /// The login with the password read from `passwordFile` (a path resolved by the caller; one line,
    /// surrounding whitespace ignored); nil file, no password.
    public static func reading(connection: String, passwordFile: String?) throws(DatabaseError) -> PostgresLogin {
        guard let passwordFile else { return PostgresLogin(connection: connection, password: nil) }
        do {
            let bytes = try Posix.readFile(passwordFile, limit: 4096)
            return PostgresLogin(connection: connection, password: String(decoding: bytes[...].trimmingASCIIWhitespace(), as: UTF8.self))
        } catch {
            throw DatabaseError(code: 1, message: "cannot read server.linkStore.passwordFile \(passwordFile): \(error.message)")
        }
    }

    /// For logs: the connection string, which holds no password.
    public var description: String { "PostgreSQL (\(connection))" }
}
