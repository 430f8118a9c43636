// MIT Kerberos' GSS-API (Debian's libkrb5-dev), for the Negotiate (SPNEGO) scheme of the gateway and the SDK.
// The OIDs are C globals, mutable to Swift 6; these accessors hand them out without the concurrency error.
#ifndef GATEHOUSE_CGSSAPI_SHIM_H
#define GATEHOUSE_CGSSAPI_SHIM_H

#include <gssapi/gssapi.h>
#include <gssapi/gssapi_krb5.h>
#include <gssapi/gssapi_ext.h>

/// SPNEGO, 1.3.6.1.5.5.2.
static inline gss_OID gatehouse_gss_mech_spnego(void) {
    static gss_OID_desc oid = { 6, (void *)"\x2b\x06\x01\x05\x05\x02" };
    return &oid;
}

/// Kerberos 5, 1.2.840.113554.1.2.2.
static inline gss_OID gatehouse_gss_mech_krb5(void) {
    static gss_OID_desc oid = { 9, (void *)"\x2a\x86\x48\x86\xf7\x12\x01\x02\x02" };
    return &oid;
}

static inline gss_OID gatehouse_gss_nt_hostbased_service(void) { return GSS_C_NT_HOSTBASED_SERVICE; }
static inline gss_OID gatehouse_gss_nt_krb5_principal(void) { return (gss_OID)GSS_KRB5_NT_PRINCIPAL_NAME; }
static inline gss_OID gatehouse_gss_nt_user_name(void) { return GSS_C_NT_USER_NAME; }

/// GSS_S_CONTINUE_NEEDED (a macro Swift does not import).
static inline OM_uint32 gatehouse_gss_continue_needed(void) { return GSS_S_CONTINUE_NEEDED; }

/// The major status is an error (GSS_ERROR).
static inline int gatehouse_gss_error(OM_uint32 major) { return GSS_ERROR(major) ? 1 : 0; }

#endif
