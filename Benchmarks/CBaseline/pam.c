// The PAM row's baseline: the transaction of shared/spec/pam-recipe.md, appendix A (pam_start,
// pam_authenticate, pam_acct_mgmt, pam_end on the calling thread, answering every prompt with one
// secret), run against the same library the Swift side loaded (`dlopen` of an already loaded
// library returns its handle), so both sides go through the same pam_wrapper and the same service
// directory in the same process.

#include "KeygateBenchC.h"

#include <dlfcn.h>
#include <security/pam_appl.h>
#include <stdlib.h>
#include <string.h>

typedef int (*kb_pam_start_fn)(const char *, const char *, const struct pam_conv *, pam_handle_t **);
typedef int (*kb_pam_step_fn)(pam_handle_t *, int);

static int kb_pam_answer(int count, const struct pam_message **messages, struct pam_response **replies, void *secret) {
    struct pam_response *answers = calloc((size_t)count, sizeof *answers);
    if (answers == NULL) return PAM_BUF_ERR;
    for (int index = 0; index < count; index++) {
        int style = messages[index]->msg_style;
        if (style == PAM_PROMPT_ECHO_OFF || style == PAM_PROMPT_ECHO_ON) answers[index].resp = strdup(secret);
    }
    *replies = answers;
    return PAM_SUCCESS;
}

int64_t kb_pam_transactions(const char *library, const char *service, const char *user, const char *secret,
                            int64_t count) {
    void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) return -1;
    kb_pam_start_fn start = (kb_pam_start_fn)dlsym(handle, "pam_start");
    kb_pam_step_fn authenticate = (kb_pam_step_fn)dlsym(handle, "pam_authenticate");
    kb_pam_step_fn account = (kb_pam_step_fn)dlsym(handle, "pam_acct_mgmt");
    kb_pam_step_fn end = (kb_pam_step_fn)dlsym(handle, "pam_end");
    int64_t proved = -1;
    if (start != NULL && authenticate != NULL && account != NULL && end != NULL) {
        struct pam_conv conversation = {kb_pam_answer, (void *)secret};
        proved = 0;
        for (int64_t round = 0; round < count; round++) {
            pam_handle_t *pamh = NULL;
            int code = start(service, user, &conversation, &pamh);
            if (code == PAM_SUCCESS) code = authenticate(pamh, PAM_DISALLOW_NULL_AUTHTOK);
            if (code == PAM_SUCCESS) code = account(pamh, PAM_DISALLOW_NULL_AUTHTOK);
            if (pamh != NULL) end(pamh, code);
            if (code == PAM_SUCCESS) proved++;
        }
    }
    dlclose(handle);
    return proved;
}
