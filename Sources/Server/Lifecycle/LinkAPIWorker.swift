import AASA
import ConsolePages
import Database
import HTTP1
import LinkStore
import Links
import Posix
import Support
import Synchronization

/// Carries out the link API's calls on a thread of its own, so no event loop waits on the database: a
/// loop hands over the call, its body and a ticket for the connection; the answer comes back through
/// ``takeAnswers(forLoop:)`` and a wake-up of that loop. Calls are taken in order, one at a time (SQLite
/// has one writer anyway); the queue is bounded, and a call beyond it is answered 503 at once.
final class LinkAPIWorker: Sendable {
    static let queueLimit = 1_024

    struct Job: Sendable {
        var ticket: ReloadMailbox.Ticket
        var call: ShortLinkAPI.Call
        var token: APIToken
        var body: [UInt8]
    }

    private let location: LinkStoreLocation
    private let jobs = Mutex<[Job]>([])
    private let answers = Mutex<[(ReloadMailbox.Ticket, PreparedResponse)]>([])
    private let wakeup: EventFDBox
    private let stopped = Atomic<Bool>(false)
    private let thread = Mutex<Posix.Thread?>(nil)
    /// The config in force (the domain and allowlist a creation is checked against), read per call, and
    /// how to wake the loop holding an answered connection: both known once the server runs.
    private final class Hooks: Sendable {
        let config: @Sendable () -> LoadedConfig
        let wakeLoop: @Sendable (Int) -> Void
        let changed: @Sendable () -> Void
        /// The tokens in force: the console's form checks the one typed into it.
        let policy: @Sendable () -> AdminPolicy

        init(
            config: @escaping @Sendable () -> LoadedConfig,
            wakeLoop: @escaping @Sendable (Int) -> Void,
            changed: @escaping @Sendable () -> Void,
            policy: @escaping @Sendable () -> AdminPolicy
        ) {
            self.config = config
            self.wakeLoop = wakeLoop
            self.changed = changed
            self.policy = policy
        }
    }
    /// A class, not a tuple of closures: a tuple read out of the Mutex (`withLock { $0 }`, an inout) wrote
    /// back a closure wrapped in one more reabstraction thunk at every call, until a few thousand calls
    /// overflowed the worker's stack (found by Benchmarks/short-links.py; LinkAPIWorkerTests holds it).
    private let server = Mutex<Hooks?>(nil)

    init(location: LinkStoreLocation) throws(SystemError) {
        self.location = location
        wakeup = try EventFDBox()
    }

    /// `changed`: the store was written (the watcher reads it at once).
    func start(
        config: @escaping @Sendable () -> LoadedConfig,
        wakeLoop: @escaping @Sendable (Int) -> Void,
        changed: @escaping @Sendable () -> Void,
        policy: @escaping @Sendable () -> AdminPolicy = { AdminPolicy() }
    ) {
        let hooks = Hooks(config: config, wakeLoop: wakeLoop, changed: changed, policy: policy)
        server.withLock { $0 = hooks }
        let started = try? Posix.Thread { [self] in run() }
        thread.withLock { $0 = started }
    }

    func stop() {
        stopped.store(true, ordering: .releasing)
        wakeup.signal()
        thread.withLock { $0 }?.join()
    }

    /// False when the queue is full: answer 503 now.
    func submit(_ job: Job) -> Bool {
        let queued = jobs.withLock { jobs in
            guard jobs.count < Self.queueLimit else { return false }
            jobs.append(job)
            return true
        }
        if queued { wakeup.signal() }
        return queued
    }

    func takeAnswers(forLoop loop: Int) -> [(ReloadMailbox.Ticket, PreparedResponse)] {
        answers.withLock { all in
            let mine = all.filter { $0.0.loop == loop }
            all.removeAll { $0.0.loop == loop }
            return mine
        }
    }

    /// Creations per token: only this thread takes from them.
    private let budgets = Mutex<[APIToken: TokenBucket]>([:])

    /// Nil when `token` may create a link now; else the whole seconds to wait. The rate is the config's in
    /// force, so a reload that changes it applies to the next call.
    private func creationWait(_ token: APIToken, rate: Int) -> Int? {
        let now = Double(Posix.monotonicMicroseconds()) / 1_000_000
        let (rate, burst) = (Double(rate), Double(rate) * 10)
        return budgets.withLock { budgets in
            var bucket = budgets[token] ?? TokenBucket(rate: rate, burst: burst)
            if bucket.rate != rate { bucket.set(rate: rate, burst: burst) }
            defer { budgets[token] = bucket }
            return bucket.take(now: now).map { Int($0.rounded(.up)) }
        }
    }

    private func run() {
        var database: LinkDatabase?
        while !stopped.load(ordering: .acquiring) {
            _ = Posix.waitReadable([wakeup.fd], timeoutMilliseconds: 1_000)
            wakeup.event.drain()
            let batch = jobs.withLock { jobs in
                defer { jobs.removeAll() }
                return jobs
            }
            guard !batch.isEmpty else { continue }
            // Every call waiting is carried out in one transaction, one write to disk for all of them (group
            // commit): with several clients the API creates many links per fsync, and each answer is sent
            // only once the transaction holding it is on disk.
            var responses: [PreparedResponse]
            do throws(LinkStoreError) {
                if database == nil { database = try LinkDatabase(location) }
                let store = database!
                responses = try store.batch { () throws(LinkStoreError) -> [PreparedResponse] in
                    var responses: [PreparedResponse] = []
                    for job in batch { responses.append(try answer(job, store)) }
                    return responses
                }
            } catch {
                // The database is unreadable or busy: nothing was stored; the clients may retry.
                database = nil
                Log.error("link API: \(error)")
                let unavailable = AdminResponses.problem(
                    ShortLinkAPI.Problem(
                        status: 503,
                        title: "Link store unavailable",
                        detail: "\(error); nothing was changed, retry later"
                    ),
                    extraHeaders: [("Retry-After", "5")]
                )
                responses = batch.map { _ in unavailable }
            }
            let hooks = server.withLock { $0 }
            if zip(batch, responses).contains(where: { changes($0.call) && [200, 201, 303].contains($1.status) }) { hooks?.changed() }
            answers.withLock { answers in
                for (job, response) in zip(batch, responses) { answers.append((job.ticket, response)) }
            }
            for loop in Set(batch.map(\.ticket.loop)) { hooks?.wakeLoop(loop) }
        }
    }

    /// A claim code redeemed: checked (signature, age), recorded as claimed (a second claim is 410), and
    /// counted as an install of the link; the answer is the deep link.
    private func claim(
        _ text: String,
        domain: String,
        platform: String,
        _ database: LinkDatabase,
        now: Int64
    ) throws(LinkStoreError) -> PreparedResponse {
        func refuse(_ status: Int, _ title: String, _ detail: String) -> PreparedResponse {
            AdminResponses.problem(ShortLinkAPI.Problem(status: status, title: title, detail: detail))
        }
        let code: ClaimCode
        switch ClaimCode.read(text, domain: domain, key: try database.claimKey(), nowMinutes: UInt32(now / 60)) {
        case .success(let read): code = read
        case .failure(.expired): return refuse(410, "Claim expired", "claim codes work for \(ClaimCode.lifetimeMinutes / 1440) days")
        case .failure: return refuse(404, "No such claim", "no claim code \(text) on \(domain)")
        }
        let keep = Int64(ClaimCode.lifetimeMinutes) * 60 + 86_400
        switch try database.claim(code: text, domain: domain, suffix: code.suffix, now: now, keepSeconds: keep) {
        case .alreadyClaimed(let at):
            return refuse(
                410,
                "Already claimed",
                "this code was claimed at \(CivilTime(unixSeconds: Int(at)).isoSecond)Z; a code works once"
            )
        case .noLink:
            return refuse(404, "No such link", "https://\(domain)/\(code.suffix) is gone or switched off")
        case .claimed(let link):
            let day = String(CivilTime(unixSeconds: Int(now)).isoSecond.prefix(10))
            _ = try database.addClicks(
                [
                    LinkDatabase.ClickCount(
                        link: link.id,
                        visitor: platform,
                        outcome: "install",
                        head: false,
                        count: 1
                    )
                ],
                day: day
            )
            return StandardResponses.json(status: 200, ShortLinkAPI.claimJSON(link))
        }
    }

    /// A creation refused: the problem, and headers it comes with (`Retry-After`).
    struct Refusal: Error {
        var problem: ShortLinkAPI.Problem
        var headers: [(String, String)] = []
    }

    /// The link a creation body (FDL's or the native one) makes, stored; or why not — the token's rate, the
    /// body's checks against the config in force, a taken alias.
    private func created(
        from body: [UInt8],
        native: Bool,
        token: APIToken,
        _ database: LinkDatabase,
        now: Int64
    ) throws(LinkStoreError) -> Result<StoredLink, Refusal> {
        guard let config = server.withLock({ $0 })?.config() else {
            throw LinkStoreError.database(DatabaseError(code: 1, message: "the server is not running"))
        }
        let rate = config.config?.server.linkAPICreationsPerSecond ?? ServerSettings().linkAPICreationsPerSecond
        if let wait = creationWait(token, rate: rate) {
            let problem = ShortLinkAPI.Problem(
                status: 429,
                title: "Too many links",
                detail: "this token may create \(rate) links a second (server.linkAPI.creationsPerSecond); nothing was stored"
            )
            return .failure(Refusal(problem: problem, headers: [("Retry-After", String(max(1, wait)))]))
        }
        switch ShortLinkAPI.creation(body: body, config: config, native: native) {
        case .failure(let problem):
            return .failure(Refusal(problem: problem))
        case .success(let creation):
            do throws(LinkStoreError) {
                return .success(try create(creation, database, now: now))
            } catch {
                guard case .conflict(let existing) = error else { throw error }
                let problem = ShortLinkAPI.Problem(
                    status: 409,
                    title: "Suffix taken",
                    detail: "\(existing.shortLink) already exists (\(existing.state.rawValue), to \(existing.parameters["link"] ?? "?"))",
                    path: "$.suffix"
                )
                return .failure(Refusal(problem: problem))
            }
        }
    }

    /// Which token the form's token field holds: the console's form creates links as the API does, only
    /// with a token (a local program could forge the browser's Origin, never the token).
    static func formToken(_ typed: String?, policy: AdminPolicy) -> Result<APIToken, ShortLinkAPI.Problem> {
        guard policy.token != nil || policy.linkAPIToken != nil else {
            return .failure(
                ShortLinkAPI.Problem(
                    status: 403,
                    title: "No API token",
                    detail: "creating links needs a token, in the console as in the API: set server.linkAPI.tokenFile (or adminTokenFile)",
                    path: "$.token"
                )
            )
        }
        let bearer = typed.map { Array("Bearer \($0)".utf8) } ?? []
        if let linkAPIToken = policy.linkAPIToken, bearer.withUnsafeBufferPointer({ Router.bearerMatches($0, linkAPIToken) }) {
            return .success(.linkAPI)
        }
        if let adminToken = policy.token, bearer.withUnsafeBufferPointer({ Router.bearerMatches($0, adminToken) }) {
            return .success(.admin)
        }
        return .failure(
            ShortLinkAPI.Problem(
                status: 401,
                title: "Unauthorized",
                detail: typed == nil
                    ? "give the link API's token (or the admin token)" : "that is not the link API's token nor the admin token",
                path: "$.token"
            )
        )
    }

    /// The console's form: the link domains of the config in force, and what a refused submission held.
    private func formContent(values: [String: String] = [:], refusal: String? = nil, field: String? = nil) -> LinkFormPage.Content {
        let config = server.withLock { $0 }?.config()
        var domains: [String] = []
        for site in config?.sites ?? [] where site.site.links != nil {
            for host in site.site.hosts where !host.value.description.hasPrefix("*") { domains.append(host.value.description) }
        }
        let policy = server.withLock { $0 }?.policy() ?? AdminPolicy()
        var content = LinkFormPage.Content(domains: domains, values: values, refusal: refusal, field: field)
        content.tokenConfigured = policy.token != nil || policy.linkAPIToken != nil
        return content
    }

    /// An alias is stored or refused as taken; a drawn suffix that is taken is drawn again.
    private func create(_ creation: ShortLinkAPI.Creation, _ database: LinkDatabase, now: Int64) throws(LinkStoreError) -> StoredLink {
        let short: Bool
        switch creation.suffix {
        case .alias(let alias):
            return try database.create(StoredLink(domain: creation.domain, suffix: alias, parameters: creation.parameters), now: now)
        case .short: short = true
        case .unguessable: short = false
        }
        for _ in 0..<8 {
            let suffix = try database.newSuffix(domain: creation.domain, short: short)
            do throws(LinkStoreError) {
                return try database.create(StoredLink(domain: creation.domain, suffix: suffix, parameters: creation.parameters), now: now)
            } catch {
                if case .conflict = error { continue }
                throw error
            }
        }
        throw LinkStoreError.database(DatabaseError(code: 5, message: "no free suffix after 8 tries"))
    }

    private func changes(_ call: ShortLinkAPI.Call) -> Bool {
        switch call {
        case .create, .createNative, .consoleCreate, .change, .update, .domainSwitch: return true
        case .read, .list, .history, .clicks, .stats, .domainState, .claim, .consolePage, .consoleForm: return false
        }
    }

    private func answer(_ job: Job, _ database: LinkDatabase) throws(LinkStoreError) -> PreparedResponse {
        let now = Int64(Posix.unixTime())
        switch job.call {
        case .create, .createNative:
            switch try created(from: job.body, native: job.call == .createNative, token: job.token, database, now: now) {
            case .failure(let refusal):
                return AdminResponses.problem(refusal.problem, extraHeaders: refusal.headers)
            case .success(let link) where job.call == .create:
                return StandardResponses.json(status: 200, ShortLinkAPI.createdJSON(link))
            case .success(let link):
                return StandardResponses.json(
                    status: 201,
                    JSONWriter.string(ShortLinkAPI.linkJSON(link)),
                    extraHeaders: [("Location", "/v1/links/\(link.domain)/\(link.suffix)")]
                )
            }
        case .consoleForm:
            return AdminResponses.console(
                ConsoleRenderer.Answer(
                    status: 200,
                    contentType: "text/html; charset=utf-8",
                    body: Array(LinkFormPage.html(formContent()).utf8)
                )
            )
        case .consoleCreate:
            // Refused: the form again, with the words, the field marked and what was typed kept.
            func refused(_ problem: ShortLinkAPI.Problem, _ values: [String: String]) -> PreparedResponse {
                let content = formContent(values: values, refusal: problem.detail, field: ConsoleLinkForm.field(of: problem.path))
                return AdminResponses.console(
                    ConsoleRenderer.Answer(
                        status: problem.status,
                        contentType: "text/html; charset=utf-8",
                        body: Array(LinkFormPage.html(content).utf8)
                    )
                )
            }
            var values: [String: String]
            switch ConsoleLinkForm.values(job.body) {
            case .failure(let problem): return refused(problem, [:])
            case .success(let given): values = given
            }
            // A token is never shown again, whatever the answer.
            let typed = values.removeValue(forKey: "token")
            var token = job.token
            if token == .none {
                switch Self.formToken(typed, policy: server.withLock { $0 }?.policy() ?? AdminPolicy()) {
                case .success(let matched): token = matched
                case .failure(let problem): return refused(problem, values)
                }
            }
            switch try created(from: ConsoleLinkForm.nativeBody(values), native: true, token: token, database, now: now) {
            case .failure(let refusal):
                return refused(refusal.problem, values)
            case .success(let link):
                // To the new link's own page: a path made from what was stored, never from the request.
                return AdminResponses.seeOther("/console/link/\(HTML.component(link.domain))/\(HTML.component(link.suffix))")
            }
        case .update(let domain, let suffix):
            guard let config = server.withLock({ $0 })?.config() else {
                throw LinkStoreError.database(DatabaseError(code: 1, message: "the server is not running"))
            }
            guard let existing = try database.link(domain: domain, suffix: suffix), existing.state != .deleted else {
                return AdminResponses.problem(
                    ShortLinkAPI.Problem(status: 404, title: "No such link", detail: "no link https://\(domain)/\(suffix)")
                )
            }
            switch ShortLinkAPI.updatedParameters(body: job.body, existing: existing, config: config) {
            case .failure(let problem): return AdminResponses.problem(problem)
            case .success(let parameters):
                let link = try database.update(domain: domain, suffix: suffix, parameters: parameters, now: now)
                return StandardResponses.json(status: 200, JSONWriter.string(ShortLinkAPI.linkJSON(link)))
            }
        case .claim(let text, let domain, let platform):
            return try claim(text, domain: domain, platform: platform, database, now: now)
        case .consolePage(let domain, let suffix, let days):
            guard let link = try database.link(domain: domain, suffix: suffix), link.state != .deleted else {
                return AdminResponses.noConsolePage
            }
            let dayList = (0..<days).reversed().map { String(CivilTime(unixSeconds: Int(now) - $0 * 86_400).isoSecond.prefix(10)) }
            let page = LinkPage.Content(
                shortLink: link.shortLink,
                state: link.state.rawValue,
                domainDisabled: try database.disabledDomains()[domain] != nil,
                parameters: link.parameters.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) },
                history: try database.history(domain: domain, suffix: suffix).map { (at: $0.at, change: $0.change) },
                days: dayList,
                clicks: try database.clicks(domain: domain, suffix: suffix, from: dayList.first ?? "")
            )
            return AdminResponses.console(
                ConsoleRenderer.Answer(status: 200, contentType: "text/html; charset=utf-8", body: Array(LinkPage.html(page).utf8))
            )
        case .domainState(let domain), .domainSwitch(let domain, _):
            guard let config = server.withLock({ $0 })?.config(), config.site(forHost: domain)?.site.links != nil else {
                return AdminResponses.problem(
                    ShortLinkAPI.Problem(status: 404, title: "Not a link domain", detail: "\(domain) is not a link domain of this server")
                )
            }
            if case .domainSwitch(_, let disabled) = job.call { try database.setDomain(domain, disabled: disabled, now: now) }
            return StandardResponses.json(
                status: 200,
                ShortLinkAPI.domainJSON(domain, disabledSince: try database.disabledDomains()[domain])
            )
        case .read(let domain, let suffix), .history(let domain, let suffix), .clicks(let domain, let suffix, _),
            .stats(let domain, let suffix, _):
            guard let link = try database.link(domain: domain, suffix: suffix), link.state != .deleted else {
                return AdminResponses.problem(
                    ShortLinkAPI.Problem(status: 404, title: "No such link", detail: "no link https://\(domain)/\(suffix)")
                )
            }
            switch job.call {
            case .history:
                return StandardResponses.json(
                    status: 200,
                    ShortLinkAPI.historyJSON(link, try database.history(domain: domain, suffix: suffix))
                )
            case .clicks(_, _, let days), .stats(_, _, let days):
                let first = String(CivilTime(unixSeconds: Int(now) - (days - 1) * 86_400).isoSecond.prefix(10))
                let rows = try database.clicks(domain: link.domain, suffix: link.suffix, from: first).map {
                    ShortLinkAPI.ClickRow(day: $0.day, visitor: $0.visitor, outcome: $0.outcome, head: $0.head, count: $0.count)
                }
                if case .stats = job.call { return StandardResponses.json(status: 200, ShortLinkAPI.linkStatsJSON(rows)) }
                return StandardResponses.json(status: 200, ShortLinkAPI.clicksJSON(link, rows))
            default:
                return StandardResponses.json(status: 200, JSONWriter.string(ShortLinkAPI.linkJSON(link)))
            }
        case .list(let domain, let afterDomain, let afterSuffix, let limit):
            // One more than asked: whether a next page exists is known without another query.
            let found = try database.list(domain: domain, after: (afterDomain, afterSuffix), limit: limit + 1)
            let page = Array(found.prefix(limit))
            return StandardResponses.json(
                status: 200,
                ShortLinkAPI.pageJSON(
                    page,
                    disabledDomains: try database.disabledDomains().filter { domain == nil || $0.key == domain },
                    next: found.count > limit ? page.last : nil
                )
            )
        case .change(let domain, let suffix, let state):
            do throws(LinkStoreError) {
                let link = try database.setState(domain: domain, suffix: suffix, state, now: now)
                return StandardResponses.json(status: 200, JSONWriter.string(ShortLinkAPI.linkJSON(link)))
            } catch {
                guard case .notFound = error else { throw error }
                return AdminResponses.problem(
                    ShortLinkAPI.Problem(status: 404, title: "No such link", detail: "no link https://\(domain)/\(suffix)")
                )
            }
        }
    }
}
