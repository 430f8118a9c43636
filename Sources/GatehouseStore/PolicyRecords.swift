/// A security policy applied by an operator through the admin API: kept in the store so that every node sharing
/// it switches to it, and so that it outlives restarts.
///
/// Versions start at 1 and increase by one per applied policy; a node started from a policy file runs version 0
/// until the store holds one.
public struct StoredPolicy: Codable, Sendable, Equatable {
    /// The policy's version; unique, increasing.
    public var version: Int64
    /// The policy's YAML source, as the operator sent it.
    public var yaml: String
    /// When it was applied, epoch ms.
    public var appliedAt: Int64
    /// The confidential client that applied it.
    public var actor: String

    public init(version: Int64, yaml: String, appliedAt: Int64, actor: String) {
        self.version = version
        self.yaml = yaml
        self.appliedAt = appliedAt
        self.actor = actor
    }
}
