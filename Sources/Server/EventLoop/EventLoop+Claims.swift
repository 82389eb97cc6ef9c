import AASA
import HTTP1
import Links
import Posix

extension EventLoop {
    /// Hands a call to the link worker (the API, a claim): the connection waits for its answer while the
    /// loop serves others.
    func handToLinkWorker(_ connection: Connection, call: ShortLinkAPI.Call, token: APIToken) {
        guard let worker = state.linkAPI else {
            let off = ShortLinkAPI.Problem(
                status: 404,
                title: "No short links here",
                detail:
                    "short links need a link store (server.stateDirectory or server.linkStore) and a site with \"links\" in the config the server started with"
            )
            connection.machine.respond(AdminResponses.problem(off))
            return
        }
        let body = connection.machine.keptBody.map { range in connection.withRequestBytes { Array($0[range]) } } ?? []
        let ticket = ReloadMailbox.Ticket(loop: index, slot: connection.slot, serial: connection.serial)
        if worker.submit(LinkAPIWorker.Job(ticket: ticket, call: call, token: token, body: body)) {
            connection.machine.respondLater()
        } else {
            let busy = ShortLinkAPI.Problem(
                status: 503,
                title: "Busy",
                detail: "\(LinkAPIWorker.queueLimit) link API calls are waiting; retry"
            )
            connection.machine.respond(AdminResponses.problem(busy, extraHeaders: [("Retry-After", "1")]))
        }
    }

    /// The response of a claim step the loop carries out itself: a fresh claim code (the clock and 64
    /// random bits from the system, no write: the code is signed, and the store learns of it only when it is
    /// claimed). Nil: no key (the caller sends the answer's own response).
    func claimResponse(_ action: ClaimAction, key: [UInt8]?) -> PreparedResponse? {
        guard let key else { return nil }
        func mint(_ domain: String, _ suffix: String) -> String {
            var random = SystemRandomNumberGenerator()
            let nonce = (0..<ClaimCode.nonceBytes).map { _ in UInt8.random(in: 0...255, using: &random) }
            let minutes = UInt32(Posix.unixTime() / 60)
            return ClaimCode(domain: domain, suffix: suffix, issued: minutes, nonce: nonce).url(key: key)
        }
        switch action {
        case .playStore(let package, let domain, let suffix):
            return PreparedResponse(
                shared: LinkResponder.redirectHeaders,
                field: "Location",
                value: StoreLinks.playStore(package: package, referrer: mint(domain, suffix))
            )
        case .claimURL(let domain, let suffix):
            return PreparedResponse(
                status: 200,
                headers: [("Server", "aasa-server"), ("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store")],
                body: Array(mint(domain, suffix).utf8)
            )
        case .redeem:
            return nil
        }
    }
}
