/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The errors of org.sbx.Manager1 (docs/design.md, sbxd(8)): public names, each with a one-line message. */
#define ERR_INVALID "org.sbx.Error.InvalidRequest"
#define ERR_NO_PROFILE "org.sbx.Error.NoSuchProfile"
#define ERR_START_FAILED "org.sbx.Error.StartFailed"
#define ERR_BAD_PROFILE "org.sbx.Error.BadProfile"
#define ERR_UNENFORCEABLE "org.sbx.Error.CannotEnforce"
#define ERR_NO_RUN "org.sbx.Error.NoSuchRun"
#define ERR_ACCESS "org.sbx.Error.AccessDenied"
#define ERR_BUSY "org.sbx.Error.Busy"
#define ERR_NO_SANDBOX "org.sbx.Error.NoSuchSandbox"
#define ERR_EXISTS "org.sbx.Error.Exists"
#define ERR_CANNOT_CAPTURE "org.sbx.Error.CannotCapture"
#define ERR_NO_SECRET "org.sbx.Error.NoSuchSecret"
#define ERR_NO_EXPORT_ITEM "org.sbx.Error.NoSuchItem"
#define ERR_NO_CACHE "org.sbx.Error.NoSuchCache"
#define ERR_NO_IMAGE "org.sbx.Error.NoSuchImage"
#define ERR_IMAGE_MISMATCH "org.sbx.Error.ImageMismatch"
#define ERR_NO_TERMINAL "org.sbx.Error.NoTerminal"
