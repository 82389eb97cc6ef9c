import AASA
import Posix

/// Opens every listener before anything serves: a port in use leaves nothing listening.
struct BoundListeners {
    var main: [ListenerSocket] = []
    var admin: ListenerSocket?
    /// One line per listener for the log ("listening on http://127.0.0.1:8080").
    var announcements: [String] = []
    /// The main listeners as bound: port 0 replaced by the port the system chose.
    var listening: [ServerSettings.Listener] = []

    func closeAll() {
        for socket in main where socket.fd >= 0 { Posix.close(socket.fd) }
        if let admin { Posix.close(admin.fd) }
    }

    /// A listener that could not be opened, and what to do about it.
    struct Failure: Error {
        var message: String
    }

    /// `hint` may replace the generic advice for an error (dev explains privileged ports its own way).
    static func bind(_ settings: ServerSettings, hint: (SystemError) -> String? = { _ in nil }) -> Result<BoundListeners, Failure> {
        var bound = BoundListeners()
        for listener in settings.listeners {
            let opened: (fd: Int32, port: Int)
            do {
                opened = try Posix.listen(address: listener.address, port: listener.port, deferAccept: true)
            } catch  where error.isAddressUnavailable && listener.address == "::" && !settings.listenersConfigured {
                // The default listeners include IPv6; a machine without it still serves IPv4.
                Log.info("IPv6 is not available here (\(error.reason.lowercased())); listening on IPv4 only")
                continue
            } catch {
                bound.closeAll()
                return .failure(
                    Failure(
                        message: describe(error, listener: "listener \(listener.description)", key: "server.listen or --listen", hint: hint)
                    )
                )
            }
            var actual = listener
            actual.port = opened.port
            bound.listening.append(actual)
            let shown = ServerSettings.Listener(address: listener.address, port: opened.port).description
            bound.main.append(
                ListenerSocket(fd: opened.fd, role: .main, proxyProtocol: listener.proxyProtocol, tls: listener.tls, address: shown)
            )
            bound.announcements.append(
                "listening on \(listener.tls ? "https" : "http")://\(shown)" + (listener.proxyProtocol ? " (PROXY protocol)" : "")
            )
        }
        if let admin = settings.admin {
            do {
                let opened = try Posix.listen(address: admin.address, port: admin.port)
                let shown = ServerSettings.Listener(address: admin.address, port: opened.port).description
                bound.admin = ListenerSocket(fd: opened.fd, role: .admin, proxyProtocol: false, tls: false, address: shown)
                bound.announcements.append("admin on http://\(shown) (/healthz, /readyz, /metrics, /status, /console, POST /reload)")
            } catch {
                bound.closeAll()
                return .failure(
                    Failure(message: describe(error, listener: "admin \(admin.description)", key: "server.admin or --admin", hint: hint))
                )
            }
        }
        return .success(bound)
    }

    /// "admin 127.0.0.1:9090: address already in use — another process is listening there; change server.admin or --admin".
    static func describe(_ error: SystemError, listener: String, key: String, hint: (SystemError) -> String?) -> String {
        var advice: String
        if error.isAddressInUse {
            advice = "another process is listening there; change \(key)"
        } else if error.isPermissionDenied {
            advice = "ports below 1024 need root or CAP_NET_BIND_SERVICE; or change \(key)"
        } else if error.isAddressUnavailable {
            advice = "that address is not configured on this machine; change \(key)"
        } else {
            advice = "change \(key)"
        }
        if let specific = hint(error) { advice = specific }
        return "\(listener): \(error.reason.lowercased()) — \(advice)"
    }
}
