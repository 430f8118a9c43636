/* Prints N SPNEGO tokens (base64, one a line) for a service from the default credential cache, and how long
   making them took: what a repeated Negotiate client costs on its side. Each token is a new context (a new
   authenticator), as a browser or curl --negotiate makes for every request. With a third argument `memory`, the
   default cache is first copied into a MEMORY cache (no file read per token). For scripts/bench-negotiate. */
#include <gssapi/gssapi.h>
#include <gssapi/gssapi_krb5.h>
#include <krb5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char table[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void base64(const unsigned char *in, size_t length, FILE *out) {
    for (size_t i = 0; i < length; i += 3) {
        unsigned v = in[i] << 16 | (i + 1 < length ? in[i + 1] << 8 : 0) | (i + 2 < length ? in[i + 2] : 0);
        fputc(table[v >> 18 & 63], out);
        fputc(table[v >> 12 & 63], out);
        fputc(i + 1 < length ? table[v >> 6 & 63] : '=', out);
        fputc(i + 2 < length ? table[v & 63] : '=', out);
    }
    fputc('\n', out);
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s COUNT HTTP/host@REALM [memory]\n", argv[0]); return 2; }
    long count = atol(argv[1]);
    if (argc > 3 && strcmp(argv[3], "memory") == 0) {
        krb5_context k5;
        krb5_ccache file, memory;
        if (krb5_init_context(&k5) || krb5_cc_default(k5, &file) || krb5_cc_resolve(k5, "MEMORY:gatehouse-bench", &memory)) {
            fprintf(stderr, "no credential cache\n");
            return 1;
        }
        krb5_principal client;
        if (krb5_cc_get_principal(k5, file, &client) || krb5_cc_initialize(k5, memory, client) || krb5_cc_copy_creds(k5, file, memory)) {
            fprintf(stderr, "cannot copy the credential cache (kinit first?)\n");
            return 1;
        }
        OM_uint32 ignored;
        gss_krb5_ccache_name(&ignored, "MEMORY:gatehouse-bench", NULL);
    }
    gss_OID_desc spnego = { 6, (void *)"\x2b\x06\x01\x05\x05\x02" };
    OM_uint32 minor, major;
    gss_buffer_desc nameBuffer = { strlen(argv[2]), argv[2] };
    gss_name_t name;
    major = gss_import_name(&minor, &nameBuffer, (gss_OID)GSS_KRB5_NT_PRINCIPAL_NAME, &name);
    if (GSS_ERROR(major)) { fprintf(stderr, "gss_import_name failed\n"); return 1; }
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (long i = 0; i < count; i++) {
        gss_ctx_id_t context = GSS_C_NO_CONTEXT;
        gss_buffer_desc token = GSS_C_EMPTY_BUFFER;
        major = gss_init_sec_context(&minor, GSS_C_NO_CREDENTIAL, &context, name, &spnego, 0, 0, GSS_C_NO_CHANNEL_BINDINGS,
                                     GSS_C_NO_BUFFER, NULL, &token, NULL, NULL);
        if (GSS_ERROR(major)) { fprintf(stderr, "gss_init_sec_context failed (kinit first?)\n"); return 1; }
        base64(token.value, token.length, stdout);
        gss_release_buffer(&minor, &token);
        gss_delete_sec_context(&minor, &context, GSS_C_NO_BUFFER);
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    double seconds = (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
    fprintf(stderr, "client: %ld tokens in %.2f s, %.1f us per token\n", count, seconds, seconds * 1e6 / count);
    gss_release_name(&minor, &name);
    return 0;
}
