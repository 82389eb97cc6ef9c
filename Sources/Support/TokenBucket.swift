/// A rate limit that allows bursts: `rate` actions a second on average, up to `burst` at once after a
/// quiet spell. Pure: the caller says what time it is (seconds on a monotonic clock).
public struct TokenBucket: Sendable, Equatable {
    public private(set) var rate: Double
    public private(set) var burst: Double
    private var tokens: Double
    private var updated: Double?

    public init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = burst
        tokens = burst
    }

    /// Takes one action's token: nil when allowed, or the seconds until the next one would be.
    public mutating func take(now: Double) -> Double? {
        if let updated { tokens = min(burst, tokens + max(0, now - updated) * rate) }
        updated = now
        guard tokens >= 1 else { return (1 - tokens) / rate }
        tokens -= 1
        return nil
    }

    /// A new rate (a reload changed it): the tokens held so far are kept, within the new burst.
    public mutating func set(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = burst
        tokens = min(tokens, burst)
    }
}
