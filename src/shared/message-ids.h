/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* MESSAGE_IDs of sbx's journal events. They are part of sbx's interface: never change or reuse one.
 * Each is explained in catalog/sbx.catalog (shown by `journalctl -x`); catalog/check-catalog.sh
 * fails when an ID here has no entry there, or the other way round. */

#define SBX_MESSAGE_RUN_STARTED     "12a5a0d873ff486bbfa5e2baa96431ab"
#define SBX_MESSAGE_RUN_FINISHED    "1b119a621fc64a57a51b268bcd1b4319"
#define SBX_MESSAGE_RUN_LIMIT       "cb7cd899ad0d42ad8cab8c43bcd56109"
#define SBX_MESSAGE_RUN_REFUSED     "d73fcca357cf4d3090b10e1c85b68dec"
#define SBX_MESSAGE_RUN_STOPPING    "8c9123543d2b4757889dfc7366d3c987"
#define SBX_MESSAGE_RUN_ADOPTED     "444df1ad9b374060a27574c88210fea7"
#define SBX_MESSAGE_RUN_LOST        "58381cb1b0cf4661b8c7acfa437d2f42"
#define SBX_MESSAGE_RUN_RECOVERED   "e27bf7b39fbf450fb91fe8bcaec813bd"
#define SBX_MESSAGE_PROFILE_INVALID "11780e0a7e454073822e5843ddd18f21"
#define SBX_MESSAGE_EGRESS_DENIED   "68edf29bb03a42ada8f07fdadc3cae2b"
#define SBX_MESSAGE_DNS_REFUSED     "115f4d8d85354058b845f1c36a17b1e4"
#define SBX_MESSAGE_CAPTURE_ENABLED "a1854000f84a46a7add692336e4dd272"
