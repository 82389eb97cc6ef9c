import AASA
import Posix
import QRCode

/// What `dev` prints once it listens: the entitlement lines, where the phone can reach this machine, the
/// device steps in order, a curl command that works against what was actually bound, and warnings for
/// set-ups a phone cannot use. Pure: everything it says comes in as values (tested without a network).
struct DeviceGuide {
    var hosts: [String]
    /// The listeners as bound (the real port for `--port 0`): HTTPS for the documents, plain HTTP for the
    /// landing page and the CA profile (the phone does not trust the CA before it is installed).
    var listening: [ServerSettings.Listener]
    /// The machine's interface addresses.
    var interfaces: [Posix.InterfaceAddress]
    /// `--public-address`: what the phone connects to when it is not one of ours (a container, NAT).
    var publicAddresses: [String]
    var caCertificatePath: String
    var profilePath: String
    var caFingerprint: String

    /// Whether stdout is a terminal: the QR code is then drawn black on white with ANSI colours.
    var terminal = false

    var secure: [ServerSettings.Listener] { listening.filter(\.tls) }
    var plain: [ServerSettings.Listener] { listening.filter { !$0.tls } }
    var port: Int { secure.first?.port ?? 443 }

    /// The addresses a phone on the same network can use, each with the port that serves it (with
    /// `--port 0` the IPv4 and IPv6 listeners get different ports): the public ones given, else every
    /// non-loopback, non-link-local address a listener covers.
    var reachableAddresses: [(address: String, port: Int, interface: String)] {
        if !publicAddresses.isEmpty { return publicAddresses.map { ($0, port, "--public-address") } }
        return interfaces.compactMap { candidate in
            guard !candidate.isLoopback && !candidate.isLinkLocal else { return nil }
            // Our IPv6 sockets are IPv6-only, so "::" covers IPv6 addresses and "0.0.0.0" IPv4 ones.
            let listener = secure.first { listener in
                listener.address == candidate.address || listener.address == (candidate.isIPv6 ? "::" : "0.0.0.0")
            }
            return listener.map { (candidate.address, $0.port, candidate.interface) }
        }
    }

    /// The address curl on this machine connects to: loopback when a wildcard listener covers it.
    var localAddress: String {
        guard let listener = secure.first else { return "127.0.0.1" }
        switch listener.address {
        case "0.0.0.0": return "127.0.0.1"
        case "::": return secure.contains { $0.address == "0.0.0.0" } ? "127.0.0.1" : "::1"
        // A specific LAN address: curl from this machine reaches it directly.
        default: return listener.address
        }
    }

    /// The plain-HTTP address of the CA profile on the preferred LAN address (nil without one, or
    /// without a plain listener covering it).
    var profileURL: String? {
        let addresses = reachableAddresses
        guard let preferred = addresses.first(where: { !$0.address.contains(":") }) ?? addresses.first else { return nil }
        let v6 = preferred.address.contains(":")
        let listener = plain.first { $0.address == preferred.address || $0.address == (v6 ? "::" : "0.0.0.0") } ?? plain.first
        guard let listener else { return nil }
        let host = v6 ? "[\(preferred.address)]" : preferred.address
        return "http://\(host)\(listener.port == 80 ? "" : ":\(listener.port)")\(MobileConfig.path)"
    }

    /// The public addresses no listener is on (nil when there are none, or a wildcard listener covers
    /// every address).
    var unheardPublicAddresses: [String]? {
        guard !secure.contains(where: { $0.address == "0.0.0.0" || $0.address == "::" }) else { return nil }
        let unheard = publicAddresses.filter { address in !secure.contains { $0.address == address } }
        return unheard.isEmpty ? nil : unheard
    }

    var warnings: [String] {
        var found: [String] = []
        let loopbackOnly = secure.allSatisfy { $0.address.hasPrefix("127.") || $0.address == "::1" }
        if loopbackOnly && publicAddresses.isEmpty {
            found.append(
                "listening on loopback only (\(secure.map(\.description).joined(separator: ", "))): a phone cannot "
                    + "reach it. Drop --listen, or give a LAN address (or --public-address when a container or NAT sits between)"
            )
        } else if let unheard = unheardPublicAddresses {
            // A phone sent to a public address reaches whatever listens there; a loopback socket never.
            found.append(
                loopbackOnly
                    ? "listening on loopback only (\(secure.map(\.description).joined(separator: ", "))), but the phone is sent "
                        + "to \(unheard.joined(separator: ", ")) (--public-address): nothing forwards that to loopback, so it "
                        + "reaches nothing. Drop --listen (every address), or listen on an address the forwarding reaches"
                    : "--public-address \(unheard.joined(separator: ", ")): no listener is on it (listening on "
                        + "\(secure.map(\.description).joined(separator: ", "))); that is right only when a container or NAT "
                        + "forwards it to a listener. Otherwise drop --listen, or listen on it"
            )
        } else if reachableAddresses.isEmpty {
            found.append(
                "no network address of this machine is covered by the listeners; a phone needs one on its Wi-Fi network "
                    + "(in a container, pass --public-address with the host machine's LAN address)"
            )
        }
        if port != 443 {
            found.append(
                "port \(port): iOS fetches https://HOST/.well-known/apple-app-site-association on port 443 only "
                    + "(entitlements carry no port), so a phone cannot use this; curl can. Use --port 443"
            )
        }
        return found
    }

    var text: String {
        let hostNames = hosts.joined(separator: ", ")
        var text = "\nAssociated Domains entitlement (Xcode → Signing & Capabilities → Associated Domains):\n"
        for host in hosts { text += "    applinks:\(host)?mode=developer\n    webcredentials:\(host)?mode=developer\n" }

        let addresses = reachableAddresses
        text += "\nThe phone reaches this machine at:\n"
        if addresses.isEmpty {
            text += "    (no network address found; see the warnings below)\n"
        } else {
            for entry in addresses {
                text += "    \(entry.address)\(entry.port == 443 ? "" : " port \(entry.port)")  (\(entry.interface))\n"
            }
        }
        let preferred = addresses.first { !$0.address.contains(":") } ?? addresses.first
        // Never an invented address shown as if it were this machine's: without one, say what to pass.
        let example = preferred?.address ?? "LAN-ADDRESS"
        let exampleURL =
            preferred.map { entry in
                (entry.address.contains(":") ? "[\(entry.address)]" : entry.address) + (entry.port == 443 ? "" : ":\(entry.port)")
            }
            ?? "LAN-ADDRESS" + (port == 443 ? "" : ":\(port)")
        if preferred == nil {
            text +=
                "    No LAN address of this machine was found; pass the one the phone reaches with --public-address ADDR\n"
                + "    (LAN-ADDRESS below stands for it).\n"
        }
        text += """
            On the phone's network, \(hostNames) must resolve to one of these: a local DNS entry (the router's, or
            dnsmasq: address=/\(hosts[0])/\(example)), or a public DNS record pointing at the private address.

            On the iPhone or iPad:
              1. Settings → Privacy & Security → Developer Mode: on, then restart (the switch appears once Xcode
                 has run an app on the device).
              2. Settings → Developer → Associated Domains Development: on.
              3. Run the Debug build from Xcode (the entitlement is read when the app is installed: reinstall
                 after changing it). The device fetches the file from this machine, not through Apple's CDN.
              4. Settings → Developer → Universal Links → Diagnostics: enter https://\(hosts[0])/some/path to see
                 whether it opens the app, and which rule decided.
            Developer mode accepts a certificate the device does not trust, but not an invalid one: its names must
            cover the host and it must be within its dates (this one is). Safari and curl on the phone need the CA
            installed:
              5. Point the phone's camera at the QR code below (or open \(profileURL ?? "http://\(example)\(MobileConfig.path)")
                 in Safari; https://\(exampleURL)\(MobileConfig.path) works too after accepting the warning once) and
                 allow the download; or AirDrop or mail \(profilePath) to the phone. The page at / on the same
                 address lists these steps.
              6. Settings → General → VPN & Device Management → "aasa-server development CA" → Install.
              7. Settings → General → About → Certificate Trust Settings → full trust for
                 "aasa-server development CA". Its SHA-256 fingerprint (shown under More Details) must be
                 \(caFingerprint)

            Check from this machine:

            """
        let local = localAddress
        let wildcard = local.contains(":") ? "::" : "0.0.0.0"
        let localPort = (secure.first { $0.address == local } ?? secure.first { $0.address == wildcard })?.port ?? port
        let shownPort = localPort == 443 ? "" : ":\(localPort)"
        let resolveAddress = local.contains(":") ? "[\(local)]" : local
        for host in hosts {
            text +=
                "    curl --cacert \(caCertificatePath) --resolve \(host):\(localPort):\(resolveAddress) -sI "
                + "https://\(host)\(shownPort)/.well-known/apple-app-site-association\n"
        }
        if let profileURL, let code = QRCode(profileURL) {
            text += "\nThe CA profile, \(profileURL), for the phone's camera:\n\n" + code.text(ansi: terminal)
        } else {
            text += "\n(No QR code: no LAN address with a plain-HTTP listener to put in it.)\n"
        }
        for warning in warnings { text += "\nwarning: \(warning)" }
        return text + "\n\n"
    }
}
