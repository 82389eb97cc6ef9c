/// The configuration profile that installs `dev`'s CA on an iPhone or iPad (for Safari and curl there;
/// developer mode itself accepts an untrusted certificate, as long as it is valid: names and dates).
enum MobileConfig {
    /// Where `dev` serves it, so the phone can fetch it in Safari.
    static let path = "/ca.mobileconfig"
    /// What iOS needs to offer the profile for installation instead of showing it as text.
    static let contentType = "application/x-apple-aspen-config"

    /// A configuration profile installing the CA (what iOS offers to install from Files or AirDrop).
    static func profile(caPEM: [UInt8]) -> String {
        let base64 = String(decoding: caPEM, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        var generator = SystemRandomNumberGenerator()
        func uuid() -> String {
            let hex = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }.map { byte -> String in
                let digits = String(byte, radix: 16, uppercase: true)
                return digits.count == 1 ? "0" + digits : digits
            }.joined()
            let characters = Array(hex)
            return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
                <key>PayloadContent</key>
                <array>
                    <dict>
                        <key>PayloadCertificateFileName</key>
                        <string>aasa-dev-ca.cer</string>
                        <key>PayloadContent</key>
                        <data>\(base64)</data>
                        <key>PayloadDescription</key>
                        <string>Trusts the aasa-server development CA (for Safari and curl; developer mode does not need it).</string>
                        <key>PayloadDisplayName</key>
                        <string>aasa-server development CA</string>
                        <key>PayloadIdentifier</key>
                        <string>dev.aasa-server.ca.\(uuid())</string>
                        <key>PayloadType</key>
                        <string>com.apple.security.root</string>
                        <key>PayloadUUID</key>
                        <string>\(uuid())</string>
                        <key>PayloadVersion</key>
                        <integer>1</integer>
                    </dict>
                </array>
                <key>PayloadDisplayName</key>
                <string>aasa-server development CA</string>
                <key>PayloadIdentifier</key>
                <string>dev.aasa-server.profile</string>
                <key>PayloadType</key>
                <string>Configuration</string>
                <key>PayloadUUID</key>
                <string>\(uuid())</string>
                <key>PayloadVersion</key>
                <integer>1</integer>
            </dict>
            </plist>

            """
    }
}
