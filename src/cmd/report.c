/*
 * report.c - `d4r-splice report MODULE`: one row per phase with its cut.
 *
 * For each phase, the phase+epilogue cut: statement ranges, shape, the
 * registers live across it and the bytes per warp they carry, the
 * epilogue's memory traffic, a validity column that reads
 * `READ/WRITE DEPENDENCIES: cut invalid` (with the statements) when the cut
 * crosses a read/write dependency, and where every figure came from.  The
 * first line says what the figures cover and what they do not.
 */
#include "ana/ana.h"
#include "base/sha256.h"
#include "cmd.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const usage[] = {"report MODULE [options]", NULL};

static const char coverage[] =
	"Static analysis of the PTX text: statement ranges, register live ranges across each "
	"phase+epilogue cut (bytes per warp = register bits x 32 lanes), and memory statements "
	"counted per state space; no timing, no occupancy, no execution: nothing here was run.";

int cmd_report(int argc, char **argv)
{
	const char *entry = NULL;
	unsigned gap = 0;
	bool md = false, json = false;
	const Opt opts[] = {
		OPT_STRING(0, "entry", &entry, "NAME",
		           "the function (default: the only one with mma)"),
		OPT_UINT(0, "gap", &gap, "N", 0, UINT_MAX,
		         "N other statements allowed inside a phase (default 0)"),
		OPT_FLAG(0, "md", &md, "a markdown table"),
		OPT_FLAG(0, "json", &json, "one JSON object, a row per phase"),
		OPT_END(),
	};
	OptParse op = {.verb = "report", .usage = usage, .opts = opts};
	int nargs = opt_parse(&op, argc, argv);
	if (nargs < 0)
		return op.status;
	if (opt_args(&op, nargs, argv, 1, 1, "no module given") ||
	    opt_conflict(&op, "md", "json"))
		return EXIT_ERROR;
	const char *path = argv[0];
	LoadedModule lm;
	if (cmd_load_module(path, &lm) < 0)
		return EXIT_ERROR;
	const Module *m = lm.m;
	const Func *f = cmd_pick_func(m, entry);
	if (!f) {
		cmd_unload_module(&lm);
		return EXIT_ERROR;
	}
	char sha[65];
	sha256_hex(m->src, m->len, sha);
	const char *base = strrchr(map_name(path), '/');
	base = base ? base + 1 : map_name(path);
	Err e = ERR_INIT;
	Dataflow *df = df_build(m, f, &e);
	PhaseList pl = {0};
	int rc = EXIT_OK;
	if (!df || ana_phases(df, gap, &pl, &e) < 0) {
		rc = cmd_fail("%s", err_msg(&e));
		goto out;
	}
	cJSON *root = NULL, *rows = NULL;
	if (json) {
		root = cJSON_CreateObject();
		cJSON_AddStringToObject(root, "coverage", coverage);
		cJSON_AddStringToObject(root, "module", map_name(path));
		cJSON_AddStringToObject(root, "module_sha256", sha);
		char *fn = xstrndup(m->src + f->name.off, f->name.len);
		cJSON_AddStringToObject(root, "entry", fn);
		free(fn);
		rows = cJSON_AddArrayToObject(root, "phases");
	} else {
		printf("%s\n", coverage);
		if (md)
			printf("\n| Phase | MMA stmts | Epilogue stmts | Shape | Live-in | Live-out | Bytes/warp in | Bytes/warp out | Epilogue loads | Epilogue stores | Shared bytes/warp | Validity | Provenance |\n"
			       "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
		else
			printf("%5s %-15s %-15s %-14s %7s %8s %8s %8s %6s %6s %8s  %-9s %s\n", "phase",
			       "mma", "epilogue", "shape", "live-in", "live-out", "B/w-in", "B/w-out",
			       "loads", "stores", "shB/w", "validity", "provenance");
	}
	StrBuf prov = STRBUF_INIT, valid = STRBUF_INIT;
	for (size_t i = 0; i < pl.n; i++) {
		const Phase *p = &pl.v[i];
		uint32_t last = phase_cut_last(p, true);
		CutInterface cut;
		if (df_cut(df, p->first, last, &cut, &e) < 0) {
			rc = cmd_fail("%s", err_msg(&e));
			break;
		}
		uint32_t eloads = 0, estores = 0, shbytes = 0;
		for (uint32_t st = p->epi_first; st <= p->epi_last && p->epi_last >= p->epi_first; st++) {
			const Stmt *s = func_stmt(m, f, st);
			int ld = s->op == OP_LD || s->op == OP_LDU || s->op == OP_LDMATRIX ||
			         s->op == OP_TEX || s->op == OP_SULD;
			int stt = s->op == OP_ST || s->op == OP_SUST;
			eloads += ld;
			estores += stt;
			if (stt && stmt_space(m, s) == SP_SHARED) {
				Addr a;
				addr_resolve(df, st, &a);
				shbytes += (a.elem_bytes ? a.elem_bytes : 4) * (a.nelem ? a.nelem : 1) * 32;
			}
		}
		sb_reset(&valid);
		if (cut.rw_dependency) {
			sb_adds(&valid, "READ/WRITE DEPENDENCIES: cut invalid.");
			for (size_t k = 0; k + 1 < cut.rw_pairs.n && k < 8; k += 2)
				sb_addf(&valid, " s%u->s%u", cut.rw_pairs.v[k], cut.rw_pairs.v[k + 1]);
			if (cut.rw_pairs.n > 8)
				sb_addf(&valid, " (+%zu more)", (cut.rw_pairs.n - 8) / 2);
		} else
			sb_adds(&valid, "valid");
		sb_reset(&prov);
		sb_addf(&prov, "derived from %s (sha256 %.12s) s%u-s%u by static analysis", base, sha,
		        p->first, last);
		uint32_t bin = cut_warp_bytes(df, cut.live_in.v, cut.live_in.n);
		uint32_t bout = cut_warp_bytes(df, cut.live_out.v, cut.live_out.n);
		char shape[64];
		snprintf(shape, sizeof shape, "%ux%u k%u%s", p->m_tiles, p->n_tiles, p->k,
		         p->banded ? " banded" : "");
		if (json) {
			cJSON *r = cJSON_CreateObject();
			cJSON_AddNumberToObject(r, "phase", p->number);
			cJSON *a = cJSON_AddArrayToObject(r, "mma_stmt_range");
			cJSON_AddItemToArray(a, cJSON_CreateNumber(p->first));
			cJSON_AddItemToArray(a, cJSON_CreateNumber(p->last));
			a = cJSON_AddArrayToObject(r, "cut_stmt_range");
			cJSON_AddItemToArray(a, cJSON_CreateNumber(p->first));
			cJSON_AddItemToArray(a, cJSON_CreateNumber(last));
			cJSON_AddStringToObject(r, "shape", shape);
			cJSON_AddNumberToObject(r, "live_in", (double)cut.live_in.n);
			cJSON_AddNumberToObject(r, "live_out", (double)cut.live_out.n);
			cJSON_AddNumberToObject(r, "bytes_per_warp_in", bin);
			cJSON_AddNumberToObject(r, "bytes_per_warp_out", bout);
			cJSON_AddNumberToObject(r, "epilogue_loads", eloads);
			cJSON_AddNumberToObject(r, "epilogue_stores", estores);
			cJSON_AddNumberToObject(r, "epilogue_shared_bytes_per_warp", shbytes);
			cJSON_AddBoolToObject(r, "valid", !cut.rw_dependency);
			cJSON_AddStringToObject(r, "validity", valid.p);
			cJSON_AddStringToObject(r, "provenance", prov.p);
			cJSON_AddItemToArray(rows, r);
		} else if (md) {
			printf("| %u | s%u-s%u | s%u-s%u | %s | %zu | %zu | %u | %u | %u | %u | %u | %s | %s |\n",
			       p->number, p->first, p->last, p->epi_first, p->epi_last, shape,
			       cut.live_in.n, cut.live_out.n, bin, bout, eloads, estores, shbytes, valid.p,
			       prov.p);
		} else {
			char r1[32], r2[32];
			snprintf(r1, sizeof r1, "s%u-s%u", p->first, p->last);
			if (p->epi_last >= p->epi_first)
				snprintf(r2, sizeof r2, "s%u-s%u", p->epi_first, p->epi_last);
			else
				snprintf(r2, sizeof r2, "-");
			printf("%5u %-15s %-15s %-14s %7zu %8zu %8u %8u %6u %6u %8u  %-9s %s\n", p->number,
			       r1, r2, shape, cut.live_in.n, cut.live_out.n, bin, bout, eloads, estores,
			       shbytes, valid.p, prov.p);
		}
		cut_release(&cut);
	}
	sb_release(&prov);
	sb_release(&valid);
	if (json && rc == EXIT_OK)
		cmd_json_print(root, rc); /* an error: main.c prints the error document */
	else if (json)
		cJSON_Delete(root);
out:
	phases_release(&pl);
	df_free(df);
	err_release(&e);
	cmd_unload_module(&lm);
	return rc;
}
