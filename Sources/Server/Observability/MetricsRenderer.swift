import ACME
import Support
import Synchronization
import TLS

/// Prometheus text exposition (version 0.0.4) of the merged counters.
enum MetricsRenderer {
    /// Expiry per host (files and ACME), and what ACME has been doing.
    static func certificateMetrics(_ tls: TLSContexts?, acme: CertificateManager?) -> String {
        var expiries: [(String, Int)] = []
        for entry in tls?.fileCertificateExpiries ?? [] {
            guard let notAfter = entry.notAfter else { continue }
            for host in entry.hosts { expiries.append((host, notAfter)) }
        }
        if let acme { expiries += acme.expiries.map { ($0.host, $0.notAfter) } }
        guard !expiries.isEmpty || acme != nil else { return "" }
        var out = "# HELP aasa_certificate_expiry_timestamp_seconds When each host's certificate expires (files and ACME).\n"
        out += "# TYPE aasa_certificate_expiry_timestamp_seconds gauge\n"
        for (host, notAfter) in expiries.sorted(by: { $0.0 < $1.0 }) {
            out += "aasa_certificate_expiry_timestamp_seconds{host=\"\(escape(host))\"} \(notAfter)\n"
        }
        guard let counters = acme?.counters else { return out }
        for (name, help, value) in [
            ("aasa_acme_orders_started_total", "ACME orders started (new certificates and renewals).", counters.ordersStarted),
            ("aasa_acme_orders_failed_total", "ACME orders that failed (each is retried after a backoff).", counters.ordersFailed),
            ("aasa_acme_orders_succeeded_total", "ACME orders that ended with a stored certificate.", counters.ordersSucceeded),
            (
                "aasa_acme_orders_dropped_total",
                "First orders dropped because 10,000 names already waited (ordered at their next handshake).",
                counters.dropped
            ),
            (
                "aasa_acme_orders_rate_limited_total", "Times first orders waited for acme.ordersPerHour or acme.ordersPerDomainPerWeek.",
                counters.rateLimited
            ),
            (
                "aasa_acme_bad_nonces_total", "badNonce answers from the CA (each retried with the fresh nonce it carried).",
                counters.badNonces
            ),
        ] {
            out += "# HELP \(name) \(help)\n# TYPE \(name) counter\n\(name) \(value)\n"
        }
        out += "# HELP aasa_acme_cached_certificates Obtained certificates ready in memory (the rest load at their next handshake).\n"
        out += "# TYPE aasa_acme_cached_certificates gauge\naasa_acme_cached_certificates \(counters.cached)\n"
        out += "# HELP aasa_acme_orders_waiting_on_lock Hosts whose order waits for another replica holding its storage lock.\n"
        out += "# TYPE aasa_acme_orders_waiting_on_lock gauge\naasa_acme_orders_waiting_on_lock \(counters.waitingOnLock)\n"
        out += "# HELP aasa_acme_orders_backing_off Hosts not ordered again before a time to come, after a failure.\n"
        out += "# TYPE aasa_acme_orders_backing_off gauge\naasa_acme_orders_backing_off \(max(0, counters.backingOff))\n"
        out += "# HELP aasa_acme_orders_queued Orders waiting for a worker (renewals first, then first orders under the rate limits).\n"
        out += "# TYPE aasa_acme_orders_queued gauge\naasa_acme_orders_queued \(counters.queued)\n"
        return out
    }

    static func render(_ stats: LoopStats, state: ServerState) -> String {
        var out = ""
        out += "# HELP aasa_requests_total Requests answered, by site (first host of the site), path class and status.\n"
        out += "# TYPE aasa_requests_total counter\n"
        for (key, count) in stats.requests.sorted(by: {
            ($0.key.site, $0.key.pathClass.rawValue, $0.key.status) < ($1.key.site, $1.key.pathClass.rawValue, $1.key.status)
        }) {
            out += "aasa_requests_total{host=\"\(escape(key.site))\",path=\"\(key.pathClass.label)\",status=\"\(key.status)\"} \(count)\n"
        }
        out += "# HELP aasa_link_answers_total Link answers, by site, visitor class (iphone, ipad, android, desktop, crawler, in-app) "
        out += "and outcome (store, fallback, web, landing, preview, in-app, refused).\n"
        out += "# TYPE aasa_link_answers_total counter\n"
        for (key, count) in stats.links.sorted(by: {
            ($0.key.site, $0.key.visitor, $0.key.outcome) < ($1.key.site, $1.key.visitor, $1.key.outcome)
        }) {
            out += "aasa_link_answers_total{host=\"\(escape(key.site))\",visitor=\"\(key.visitor)\",outcome=\"\(key.outcome)\"} \(count)\n"
        }
        out += fetcherMetrics(
            "bot",
            who: "Apple's CDN (User-Agent AASA-Bot/...)",
            file: "AASA",
            stats.botFetches,
            stats.botLastFetch,
            unverified: stats.unverifiedBotFetches
        )
        out += fetcherMetrics(
            "google",
            who: "Google's App Links verifier (User-Agent GoogleAssociationService)",
            file: "assetlinks.json",
            stats.googleFetches,
            stats.googleLastFetch,
            unverified: stats.unverifiedGoogleFetches
        )
        let dropped = state.fetchLog.droppedHosts
        out += "# HELP aasa_fetch_record_hosts_dropped_total Hosts the fetch records dropped to stay within server.fetchHosts, "
        out += "and within server.fetchHostsPerWildcard under one wildcard site.\n"
        out += "# TYPE aasa_fetch_record_hosts_dropped_total counter\n"
        out += "aasa_fetch_record_hosts_dropped_total{bound=\"fetchHosts\"} \(dropped.overall)\n"
        out += "aasa_fetch_record_hosts_dropped_total{bound=\"fetchHostsPerWildcard\"} \(dropped.underWildcards)\n"
        if let database = state.fetchLog.database {
            let backlog = database.backlog
            out += "# HELP aasa_fetch_records_waiting Fetch records waiting to be written to the PostgreSQL database.\n"
            out += "# TYPE aasa_fetch_records_waiting gauge\naasa_fetch_records_waiting \(backlog.waiting)\n"
            out += "# HELP aasa_fetch_records_unwritten_total Fetch records dropped because \(FetchRecordDatabase.waitingLimit) "
            out += "already waited for the database.\n"
            out += "# TYPE aasa_fetch_records_unwritten_total counter\naasa_fetch_records_unwritten_total \(backlog.dropped)\n"
        }
        out += "# HELP aasa_response_bytes_total Bytes of responses queued for sending (headers and bodies).\n"
        out += "# TYPE aasa_response_bytes_total counter\naasa_response_bytes_total \(stats.responseBytes)\n"
        out += "# HELP aasa_open_connections Client connections currently open.\n"
        out += "# TYPE aasa_open_connections gauge\naasa_open_connections \(state.connections.count)\n"
        out += "# HELP aasa_connections_accepted_total Connections accepted.\n"
        out += "# TYPE aasa_connections_accepted_total counter\naasa_connections_accepted_total \(stats.connectionsAccepted)\n"
        out += "# HELP aasa_connections_evicted_total Connections closed to stay under maxConnections.\n"
        out += "# TYPE aasa_connections_evicted_total counter\naasa_connections_evicted_total \(stats.connectionsEvicted)\n"
        out += "# HELP aasa_connection_timeouts_total Connections closed by a timeout, by kind.\n"
        out += "# TYPE aasa_connection_timeouts_total counter\n"
        for (kind, count) in stats.timeouts.sorted(by: { $0.key < $1.key }) {
            out += "aasa_connection_timeouts_total{kind=\"\(kind)\"} \(count)\n"
        }
        let current = state.current
        let snapshot = current.snapshot
        out += certificateMetrics(snapshot.tls, acme: state.acme)
        out += "# HELP aasa_config_generation Generation of the config in force (1 at start, +1 per successful reload).\n"
        out += "# TYPE aasa_config_generation gauge\naasa_config_generation \(snapshot.generation)\n"
        out += "# HELP aasa_config_loaded_timestamp_seconds When the config in force was loaded.\n"
        out += "# TYPE aasa_config_loaded_timestamp_seconds gauge\naasa_config_loaded_timestamp_seconds \(format3(snapshot.loadedAt))\n"
        out += "# HELP aasa_config_load_seconds How long loading the config in force took.\n"
        out +=
            "# TYPE aasa_config_load_seconds gauge\naasa_config_load_seconds \(format6(Double(current.loadMicroseconds) / 1e6))\n"
        out += "# HELP aasa_reload_success_total Successful config reloads.\n"
        out += "# TYPE aasa_reload_success_total counter\naasa_reload_success_total \(state.reloadSuccesses.load(ordering: .relaxed))\n"
        out += "# HELP aasa_reload_failure_total Rejected config reloads (the previous config kept serving).\n"
        out += "# TYPE aasa_reload_failure_total counter\naasa_reload_failure_total \(state.reloadFailures.load(ordering: .relaxed))\n"
        out += "# HELP aasa_reload_last_success 1 if the last reload attempt succeeded (or none was made), 0 if it was rejected.\n"
        out +=
            "# TYPE aasa_reload_last_success gauge\naasa_reload_last_success \(state.lastReloadFailed.load(ordering: .relaxed) ? 0 : 1)\n"
        out += "# HELP aasa_reload_last_attempt_timestamp_seconds When the last reload was attempted (0: never).\n"
        out += "# TYPE aasa_reload_last_attempt_timestamp_seconds gauge\n"
        out +=
            "aasa_reload_last_attempt_timestamp_seconds \(format3(Double(state.lastReloadAttemptMilliseconds.load(ordering: .relaxed)) / 1000))\n"
        out += "# HELP aasa_draining 1 while shutting down.\n"
        out += "# TYPE aasa_draining gauge\naasa_draining \(state.draining.load(ordering: .relaxed) ? 1 : 0)\n"
        return out
    }

    /// Fetches by a platform's fetcher, per site, and when it last came: `aasa_<name>_fetches_total` and
    /// `aasa_<name>_last_fetch_timestamp_seconds`.
    static func fetcherMetrics(
        _ name: String,
        who: String,
        file: String,
        _ counts: [String: Int],
        _ last: [String: Double],
        unverified: Int
    ) -> String {
        // Totals first: they exist at 0 before the first fetch, so an alert on them works from the start.
        var out = "# HELP aasa_\(name)_verified_fetches_total Fetches of the \(file) by \(who) from its own network, all sites.\n"
        out += "# TYPE aasa_\(name)_verified_fetches_total counter\naasa_\(name)_verified_fetches_total \(counts.values.reduce(0, +))\n"
        out +=
            "# HELP aasa_\(name)_unverified_fetches_total Requests whose User-Agent claims \(who) from outside its network (not counted as its).\n"
        out += "# TYPE aasa_\(name)_unverified_fetches_total counter\naasa_\(name)_unverified_fetches_total \(unverified)\n"
        out += "# HELP aasa_\(name)_fetches_total \(file) fetches by \(who) from its own network, by site.\n"
        out += "# TYPE aasa_\(name)_fetches_total counter\n"
        for (site, count) in counts.sorted(by: { $0.key < $1.key }) {
            out += "aasa_\(name)_fetches_total{host=\"\(escape(site))\"} \(count)\n"
        }
        out += "# HELP aasa_\(name)_last_fetch_timestamp_seconds When that fetcher last fetched the site's \(file).\n"
        out += "# TYPE aasa_\(name)_last_fetch_timestamp_seconds gauge\n"
        for (site, time) in last.sorted(by: { $0.key < $1.key }) {
            out += "aasa_\(name)_last_fetch_timestamp_seconds{host=\"\(escape(site))\"} \(String(format3(time)))\n"
        }
        return out
    }

    /// A Prometheus label value: backslash, quote and newline escaped.
    static func escape(_ value: String) -> String {
        value.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"").replacingAll("\n", with: "\\n")
    }

    static func format3(_ value: Double) -> String {
        let scaled = Int((value * 1000).rounded())
        return "\(scaled / 1000).\(pad(scaled % 1000, 3))"
    }

    static func format6(_ value: Double) -> String {
        let scaled = Int((value * 1_000_000).rounded())
        return "\(scaled / 1_000_000).\(pad(scaled % 1_000_000, 6))"
    }

    static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
