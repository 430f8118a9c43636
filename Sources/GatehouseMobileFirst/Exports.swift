// MobileFirst's framework brings Foundation with it (its umbrella header imports it): so does this module, so that
// code written against it (`NSNull`, `NSLog`, `URL`) compiles with the one import changed.
@_exported import Foundation
