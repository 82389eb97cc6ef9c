import FetchRecords

/// A listening socket and what its connections speak.
struct ListenerSocket: Sendable {
    var fd: Int32
    var role: ListenerRole
    var proxyProtocol: Bool
    var tls: Bool
    /// `127.0.0.1:8080`, for messages.
    var address: String
}

/// What the loops do besides the connection protocol: logging and the connection cap.
struct LoopSettings: Sendable {
    var connection: ConnectionSettings
    var maxConnections: Int
    var accessLog: Bool
    var trustForwardedHeaders: Bool
    /// Which addresses make a fetcher's fetch count as its own.
    var fetcherNetworks: FetcherNetworks
}
