import AASA
import HTTP1
import Support

/// The connection, a time limit that ran out, and the certificate.
extension HostEvaluation {
    static func connectionFinding(_ failure: ConnectionFailure, _ observation: HostObservation) -> CheckFinding {
        let target = observation.target
        switch failure {
        case .dns(let name, let message, let notFound):
            let given = name != target.host
            return CheckFinding(
                .error,
                "check.dns",
                !notFound
                    ? "\(name) could not be resolved: the resolver failed (\(message)); try again or check the resolver"
                    : given
                        ? "\(name), given with --connect or --resolve, does not resolve: check the name (an address works too)"
                        : "\(name) does not resolve: create its DNS record (every host in the entitlement needs one), or use --resolve/--connect to check a server before DNS points at it",
                evidence: message
            )
        case .refused(let address):
            return CheckFinding(
                .error,
                "check.refused",
                "nothing accepts connections on \(address): the server is down, or listens on another port",
                evidence: observation.route ?? "connect: connection refused"
            )
        case .timedOut(let awaiting):
            return timeoutFinding(awaiting: awaiting, observation)
        case .unreachable(let message):
            return CheckFinding(
                .error,
                "check.unreachable",
                "\(observation.address ?? target.host) cannot be reached: \(message)",
                evidence: observation.route ?? message
            )
        case .tls(let kind, let message):
            switch kind {
            case .notTLS:
                return CheckFinding(
                    .error,
                    "check.tls-not-tls",
                    "\(observation.address ?? target.host) does not speak TLS: it answered the handshake with something else (plain HTTP "
                        + "on the HTTPS port?). Apple fetches https://\(target.host)/ on port 443",
                    evidence: message
                )
            case .protocolVersion:
                return CheckFinding(
                    .error,
                    "check.tls-version",
                    "no TLS version in common: Apple's fetcher uses TLS 1.2 or 1.3; enable them on the server",
                    evidence: message
                )
            case .alert(let alert):
                return CheckFinding(
                    .error,
                    "check.tls-alert",
                    "the server refused the TLS handshake with the alert \"\(alert)\" (an SNI name it has no certificate for, or no "
                        + "cipher in common)",
                    evidence: message
                )
            case .other:
                return CheckFinding(.error, "check.tls-handshake", "the TLS handshake failed", evidence: message)
            }
        }
    }

    /// The one finding for a time limit that ran out, whichever phase it ran out in.
    static func timeoutFinding(awaiting: String, _ observation: HostObservation) -> CheckFinding {
        let hint: String
        if awaiting.hasPrefix("the TCP connection") {
            hint = "a firewall drops the packets, or nothing listens at that address"
        } else if awaiting.hasPrefix("the TLS handshake") {
            hint = "the port accepts connections but its TLS does not answer (an overloaded server or a proxy that holds the connection)"
        } else if awaiting.hasPrefix("the resolver") {
            hint = "the DNS resolver is slow or unreachable"
        } else {
            hint =
                "the connection\(observation.target.scheme == .https ? " and TLS handshake" : "") succeeded, then the server sent nothing in time (a stalled backend or application)"
        }
        return CheckFinding(
            .error,
            "check.timeout",
            "the \(HostProbe.seconds(observation.timeLimit)) s limit ran out waiting for \(awaiting): \(hint)",
            evidence: observation.address
        )
    }

    static func certificateFindings(_ observation: HostObservation, _ expectations: CheckExpectations) -> [CheckFinding] {
        guard let certificate = observation.certificate else {
            return [CheckFinding(.error, "check.certificate-untrusted", "the server sent no certificate")]
        }
        var findings: [CheckFinding] = []
        let host = observation.target.host
        let evidence =
            "subject \(certificate.subject), issuer \(certificate.issuer), names \(certificate.names.joined(separator: " ")), "
            + "valid \(day(certificate.notBefore)) to \(day(certificate.notAfter))"
        // Each problem on its own: --insecure waives trust only, never the names or the dates, which a device
        // in developer mode still requires.
        var problems: [(rule: String, message: String, waivable: Bool)] = []
        if certificate.expired {
            problems.append(
                (
                    "check.certificate-expired",
                    "the certificate expired on \(day(certificate.notAfter)); renew it (Apple's CDN and devices refuse expired certificates)",
                    false
                )
            )
        }
        if certificate.notYetValid {
            problems.append(
                (
                    "check.certificate-not-yet-valid",
                    "the certificate is not valid before \(day(certificate.notBefore)); check the clocks, or wait", false
                )
            )
        }
        if certificate.hostnameMismatch {
            problems.append(
                (
                    "check.certificate-name",
                    "the certificate's names (\(certificate.names.joined(separator: ", "))) do not include \(host); issue one that covers it",
                    false
                )
            )
        }
        let devMessage =
            "this certificate was issued by the local CA of `aasa-server dev`/`dev-cert`: only devices in developer mode "
            + "(applinks:\(host)?mode=developer) that trust that CA accept it; Apple's CDN, which fetches the file for every "
            + "other install, rejects it. Use a certificate from a public CA for this host"
        let untrusted =
            certificate.verificationError.map { error in
                !certificate.expired && !certificate.notYetValid && !(certificate.hostnameMismatch && error.contains("mismatch"))
            } ?? false
        if untrusted && certificate.issuedByDevAuthority {
            // One cause, one finding: the dev CA is why the chain is not trusted.
            problems.append(
                (
                    "tls.dev-certificate",
                    devMessage + "; to check the rest against it, pass --cacert with that CA (ca.pem in dev's state directory)",
                    true
                )
            )
        } else if let error = certificate.verificationError, untrusted {
            problems.append(
                (
                    "check.certificate-untrusted",
                    "the certificate chain is not trusted (\(error))"
                        + (certificate.selfSigned || certificate.issuedByDevAuthority
                            ? "; a certificate no public CA issued works only for devices in developer mode (applinks:\(host)?mode=developer)"
                            : "; send the intermediate certificates, and use a CA that Apple's devices trust"),
                    true
                )
            )
        }
        for problem in problems {
            if expectations.insecure && problem.waivable {
                findings.append(
                    CheckFinding(
                        .warning,
                        problem.rule,
                        "ignored with --insecure, but Apple's CDN would refuse it: " + problem.message,
                        evidence: evidence
                    )
                )
            } else {
                findings.append(CheckFinding(.error, problem.rule, problem.message, evidence: evidence))
            }
        }
        if certificate.issuedByDevAuthority && !untrusted {
            findings.append(CheckFinding(.warning, "tls.dev-certificate", devMessage, evidence: evidence))
        }
        if !expectations.insecure && findings.contains(where: { $0.severity == .error }) { return findings }
        let daysLeft = (certificate.notAfter - observation.checkedAt) / 86_400
        if certificate.verificationError == nil && daysLeft < 14 {
            findings.append(
                CheckFinding(
                    .warning,
                    "check.certificate-expiring",
                    "the certificate expires on \(day(certificate.notAfter)), in \(max(0, daysLeft)) days; renew it before it does",
                    evidence: evidence
                )
            )
        } else if certificate.verificationError == nil {
            findings.append(
                CheckFinding(
                    .pass,
                    "check.certificate",
                    "trusted certificate for \(host), valid until \(day(certificate.notAfter)) (\(daysLeft) days)",
                    evidence: evidence
                )
            )
        }
        return findings
    }

    /// `2026-11-30` for a Unix time (UTC).
    static func day(_ seconds: Int) -> String { CivilTime(unixSeconds: seconds).isoDay }
}
