/// When the server gives memory back: freed heap pages to the kernel, read-only file pages (code run by
/// one-off work: loading and checking a config, setting up OpenSSL, writing the compiled-sites snapshot)
/// to the page cache. Pure: the supervisor asks ``isDue(now:activity:oneOffEndings:resident:)`` at every tick and
/// carries out the release.
///
/// - Start-up's pages go as soon as the loops serve.
/// - After a reload, five seconds later: reloads in quick succession would fault the same pages in again
///   each time.
/// - When one-off background work ends (``OneOffWork``): at the next tick. The compiled-sites snapshot is
///   written after the server listens, so its code (some 2.6 MB of pages) came back after the start's
///   release and stayed resident until the server had been quiet for ten seconds.
/// - After ten seconds without any activity, if resident memory is more than a megabyte above what it was
///   after the last release: glibc keeps freed heap pages (in every event loop's arena) mapped, so 10,000
///   connections that came and went would leave their memory resident for good. Under steady traffic
///   nothing is released (those pages are in use).
struct MemoryReturn {
    static let afterReload: Int64 = 5_000
    static let quietPeriod: Int64 = 10_000
    static let quietSlack = 1 << 20

    private(set) var releaseAt: Int64?
    private var nextQuietCheck: Int64 = 0
    private var activityAtLastCheck = -1
    private var quietSince: Int64 = 0
    private var residentAfterRelease: Int
    private var oneOffEndingsSeen: Int

    /// `now`: the start; its pages are due at once.
    init(now: Int64, resident: Int, oneOffEndings: Int) {
        releaseAt = now
        residentAfterRelease = resident
        oneOffEndingsSeen = oneOffEndings
    }

    mutating func reloaded(now: Int64) { releaseAt = now + Self.afterReload }

    /// Whether to release now. `oneOffEndings` is ``OneOffWork/endings``; `resident` is read only when the
    /// quiet rule needs it.
    mutating func isDue(now: Int64, activity: Int, oneOffEndings: Int, resident: () -> Int) -> Bool {
        if oneOffEndings != oneOffEndingsSeen {
            oneOffEndingsSeen = oneOffEndings
            releaseAt = min(releaseAt ?? now, now)
        }
        if let due = releaseAt, now >= due {
            releaseAt = nil
            return true
        }
        guard now >= nextQuietCheck else { return false }
        nextQuietCheck = now + 1_000
        if activity != activityAtLastCheck {
            activityAtLastCheck = activity
            quietSince = now
            return false
        }
        return now - quietSince >= Self.quietPeriod && resident() > residentAfterRelease + Self.quietSlack
    }

    /// After a release, what is resident is the new floor for the quiet rule.
    mutating func released(resident: Int) { residentAfterRelease = resident }
}
