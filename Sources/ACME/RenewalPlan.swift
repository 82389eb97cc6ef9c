/// When to renew a certificate and when to try again after a failure: pure arithmetic over times and a
/// random draw the caller supplies (tests give fixed ones).
public enum RenewalPlan {
    /// Inside the CA's suggested window when it gave one (RFC 9773 §4.2: a uniformly random moment in it);
    /// otherwise two thirds into the lifetime, minus up to 1/30 of the lifetime of jitter so replicas and
    /// certificates issued together do not all renew in the same second. A 6-day certificate renews after
    /// about 4 days, a 90-day one after about 60.
    public static func renewAt(notBefore: Int, notAfter: Int, window: (start: Int, end: Int)?, random: Double) -> Int {
        if let window, window.end >= window.start {
            return window.start + Int(Double(window.end - window.start) * random)
        }
        let lifetime = max(0, notAfter - notBefore)
        return notBefore + lifetime * 2 / 3 - Int(Double(lifetime / 30) * random)
    }

    /// When to ask the CA for a certificate's renewal information again (RFC 9773 §4.3): after its
    /// Retry-After, kept between 30 seconds (a CA asking for less is not taken at its word) and a day;
    /// six hours when it gave none.
    public static func nextRenewalInfoCheck(retryAfter: Int?, now: Int) -> Int {
        now + min(max(retryAfter ?? 21_600, 30), 86_400)
    }

    /// The renewal time after the CA's renewal information said `window`: unchanged while it lies inside
    /// the window (a moment already drawn from it), else a new moment drawn from the window.
    public static func renewAt(keeping current: Int, window: (start: Int, end: Int), random: Double) -> Int {
        if current >= window.start && current <= window.end { return current }
        return renewAt(notBefore: 0, notAfter: 0, window: window, random: random)
    }

    /// Seconds before the next attempt after `failures` failures in a row: the CA's Retry-After when it
    /// gave one, else `base` doubling (1, 2, 4 … × base), at most a day; never sooner than `base`.
    /// After a transient failure (the CA down or failing on its side): from 5 seconds, doubling, at most `base`.
    public static func transientBackoff(failures: Int, base: Int) -> Int {
        min(5 << min(max(failures - 1, 0), 16), max(base, 5))
    }

    public static func backoff(failures: Int, base: Int, retryAfter: Int?) -> Int {
        let doubled = base << min(max(failures - 1, 0), 16)
        let planned = min(doubled, 86_400)
        guard let retryAfter else { return max(planned, 1) }
        return max(retryAfter, min(base, 86_400))
    }
}
