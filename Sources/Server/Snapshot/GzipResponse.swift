import AASA
import HTTP1
import Synchronization

/// What a gzip request for one document gets: its gzip form's response once ``GzipForm`` has made the
/// form, the identity response when compressing does not pay. Made when first asked for (see
/// ``PendingGzipForms``): after the snapshot is published, by its pass or by the first request to want it.
///
/// Once settled the answer is one atomic load: gzip requests are many of a real fetcher's (AASA-Bot's
/// among them).
final class GzipResponse: Sendable {
    private let form: GzipForm
    private let identity: PreparedResponse
    private let headers: SharedHeaders
    private let etag: UInt64
    /// Retained while set, released with this object.
    private let settled = Atomic<Unmanaged<PreparedResponse>?>(nil)

    init(form: GzipForm, identity: PreparedResponse, headers: SharedHeaders, etag: UInt64) {
        self.form = form
        self.identity = identity
        self.headers = headers
        self.etag = etag
    }

    deinit { settled.load(ordering: .acquiring)?.release() }

    var isSettled: Bool { settled.load(ordering: .acquiring) != nil }

    /// The response for a request that accepts gzip; compresses the document if nobody has yet.
    func response() -> PreparedResponse {
        if let response = settled.load(ordering: .acquiring) { return response.takeUnretainedValue() }
        return settle()
    }

    private func settle() -> PreparedResponse {
        let bytes = form.bytes()
        let response =
            bytes.count == 0
            ? identity
            : PreparedResponse(
                shared: headers,
                etag: etag,
                // A strong ETag names one representation, so the gzip form gets its own.
                etagSuffix: "-gz",
                headers: [("Content-Encoding", "gzip")],
                body: bytes.buffer,
                owner: bytes.owner
            )
        let retained = Unmanaged.passRetained(response)
        let (stored, first) = settled.compareExchange(
            expected: nil,
            desired: retained,
            successOrdering: .acquiringAndReleasing,
            failureOrdering: .acquiring
        )
        guard stored else {
            retained.release()
            return first!.takeUnretainedValue()
        }
        return response
    }
}
