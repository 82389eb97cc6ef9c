/// The orders waiting for a worker, in two queues: renewals first, so a flood of new names never delays
/// a certificate that is about to expire; first orders under rate limits of our own (overall and per
/// registered domain) that stay inside the CA's, so made-up names cannot spend its allowance. Bounded:
/// what does not fit is dropped and counted. A pure value: the manager's threads call it under its lock.
struct OrderQueue {
    enum Kind: Equatable, Sendable {
        case first
        case renewal
    }

    struct Limits: Equatable, Sendable {
        /// First orders per hour, all names together (Let's Encrypt: 300 new orders per account per 3 hours).
        var perHour: Int
        /// First orders per registered domain per week (Let's Encrypt: 50 certificates per registered domain per week).
        var perDomainPerWeek: Int
        /// Names waiting for a first order at most; renewals are never dropped (one per stored certificate).
        var capacity: Int
    }

    enum Enqueued: Equatable {
        case queued
        case alreadyQueued
        /// The first-order queue is full.
        case dropped
    }

    enum Next: Equatable {
        case order(String, Kind)
        /// Nothing may start before this time (Unix seconds): every waiting first order is rate limited.
        case waitUntil(Int)
        case empty
    }

    let limits: Limits
    private var renewals: [String] = []
    private var firsts: [String] = []
    private var queued: Set<String> = []
    private var overall: TokenBucket
    private var domains: [String: TokenBucket] = [:]
    private(set) var dropped = 0
    /// First orders that waited for the rate limits at least once.
    private(set) var rateLimited = 0

    init(limits: Limits, now: Int) {
        self.limits = limits
        overall = TokenBucket(capacity: max(1, limits.perHour), refillSeconds: 3_600.0 / Double(max(1, limits.perHour)), now: now)
    }

    var count: Int { renewals.count + firsts.count }
    var waitingFirstOrders: Int { firsts.count }

    mutating func enqueue(_ host: String, _ kind: Kind) -> Enqueued {
        guard !queued.contains(host) else { return .alreadyQueued }
        switch kind {
        case .renewal:
            renewals.append(host)
        case .first:
            guard firsts.count < limits.capacity else {
                dropped += 1
                return .dropped
            }
            firsts.append(host)
        }
        queued.insert(host)
        return .queued
    }

    /// The next order to start at `now` (Unix seconds): a renewal if any, else — when `firstOrders` allows
    /// one more first order to run — the first waiting name whose registered domain and the overall limit
    /// both have room.
    mutating func next(now: Int, firstOrders: Bool = true) -> Next {
        if !renewals.isEmpty {
            let host = renewals.removeFirst()
            queued.remove(host)
            return .order(host, .renewal)
        }
        guard !firsts.isEmpty, firstOrders else { return .empty }
        overall.refill(now: now)
        guard overall.tokens >= 1 else {
            rateLimited += 1
            return .waitUntil(overall.nextToken(now: now))
        }
        var earliest = Int.max
        for (index, host) in firsts.enumerated() {
            let domain = RegisteredDomain.of(host)
            var bucket =
                domains[domain]
                ?? TokenBucket(
                    // Bursts of a quarter of the week's allowance: a new customer's names all at once, not all week's.
                    capacity: max(1, (limits.perDomainPerWeek + 3) / 4),
                    refillSeconds: 604_800.0 / Double(max(1, limits.perDomainPerWeek)),
                    now: now
                )
            bucket.refill(now: now)
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                domains[domain] = bucket
                overall.tokens -= 1
                firsts.remove(at: index)
                queued.remove(host)
                forgetFullBuckets(now: now)
                return .order(host, .first)
            }
            domains[domain] = bucket
            earliest = min(earliest, bucket.nextToken(now: now))
        }
        rateLimited += 1
        return .waitUntil(earliest)
    }

    /// Whether `host`, queued, starts without waiting for the limits: a renewal, or a first order with
    /// fewer names ahead of it than the overall limit has tokens and a token for its domain. Changes
    /// nothing (a handshake asks, to know whether waiting for the certificate is worth it).
    func startsSoon(_ host: String, now: Int) -> Bool {
        guard queued.contains(host) else { return false }
        guard let position = firsts.firstIndex(of: host) else { return true }
        var overall = overall
        overall.refill(now: now)
        guard overall.tokens >= Double(position + 1) else { return false }
        guard var domain = domains[RegisteredDomain.of(host)] else { return true }
        domain.refill(now: now)
        return domain.tokens >= 1
    }

    /// Buckets back at capacity carry no history: with many domains, they go.
    private mutating func forgetFullBuckets(now: Int) {
        guard domains.count > 10_000 else { return }
        domains = domains.filter {
            var bucket = $0.value
            bucket.refill(now: now)
            return bucket.tokens < bucket.capacity
        }
    }
}

/// `capacity` tokens at most, one more every `refillSeconds`.
struct TokenBucket: Equatable, Sendable {
    let capacity: Double
    let refillSeconds: Double
    var tokens: Double
    var updated: Int

    init(capacity: Int, refillSeconds: Double, now: Int) {
        self.capacity = Double(capacity)
        self.refillSeconds = refillSeconds
        tokens = Double(capacity)
        updated = now
    }

    mutating func refill(now: Int) {
        guard now > updated else { return }
        tokens = min(capacity, tokens + Double(now - updated) / refillSeconds)
        updated = now
    }

    /// When the next whole token is there (Unix seconds).
    func nextToken(now: Int) -> Int {
        guard tokens < 1 else { return now }
        return now + Int(((1 - tokens) * refillSeconds).rounded(.up))
    }
}

/// The domain a CA's per-domain limit counts by. Without the public suffix list, the last two labels:
/// `shop.example.co.uk` counts as `co.uk`, which is stricter than the CA (never looser).
enum RegisteredDomain {
    static func of(_ host: String) -> String {
        let labels = host.split(separator: ".")
        guard labels.count > 2 else { return host }
        return labels.suffix(2).joined(separator: ".")
    }
}
