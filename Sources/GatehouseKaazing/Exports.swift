// KAAZING's framework brings Foundation with it (its umbrella header imports it): so does this module, so that code
// written against it (`URLCredential`, `NSError`, `DispatchSemaphore`) compiles with the one import changed.
@_exported public import Foundation
// On Linux `URLCredential` (what a `KGLoginHandler` returns) lives in FoundationNetworking.
#if canImport(FoundationNetworking)
@_exported public import FoundationNetworking
#endif
