import Posix

/// The gzip forms a published snapshot does not have yet, made after it is published: the documents are
/// served from the first moment (identity answers need no form, and a gzip request meanwhile makes the
/// form it wants), and neither a first start nor a reload waits for compression.
enum PendingGzipForms {
    /// Makes every form of `snapshot` nobody has made yet; how many it made.
    @discardableResult
    static func make(in snapshot: Snapshot) -> Int {
        var made = 0
        func settle(_ gzip: GzipResponse?) {
            guard let gzip, !gzip.isSettled else { return }
            _ = gzip.response()
            made += 1
        }
        for group in snapshot.groups {
            for site in group.responses {
                settle(site.gzip)
                settle(site.assetLinks?.gzip)
            }
        }
        settle(snapshot.unknownHost?.gzip)
        settle(snapshot.unknownHost?.assetLinks?.gzip)
        return made
    }

    /// ``make(in:)`` on a thread of its own with spare CPU only, then `then` (the compiled-sites snapshot's
    /// write, which keeps the forms of hosted documents: made first, they are made once).
    static func makeInBackground(in snapshot: Snapshot, then: @escaping @Sendable () -> Void) {
        do {
            try Posix.Thread {
                Posix.lowerCurrentThreadPriority()
                make(in: snapshot)
                then()
                // Its code and the compressor's buffers are not needed again until the next reload.
                OneOffWork.end()
            }.detach()
        } catch {
            Log.warning("gzip forms are made as requests ask for them: \(error)")
            then()
        }
    }
}
