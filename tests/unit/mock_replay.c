/*
 * mock_replay.c - part of the stand-in driver (test_gpu_launch.c's MOCK
 * section includes it; tests/cli/smoke-layer.sh builds both into the fake
 * libcuda.so.1): what a replay module's entry stores.  Uses the MOCK
 * section's MockFunc, MockModule and probe_value.
 */
/* What a replay module's entry (src/replay: "__d4r_replay_original" or
 * "_spliced") stores at the cut's end: for each store of a register into
 * the state ("st.global.bN [%d4rplK_aJ+OFF], REG;"), the value the
 * stand-in's probes store for REG, so an entry reproduces what the dump
 * stored for the same registers; "// mock: probe-flip REG W L" in the
 * spliced entry's body flips bit 0 of REG in warp W, lane L, and
 * "// mock: replay-skip REG" in an entry's body leaves REG unstored. */
static void replay_stores(const MockFunc *mf, uint64_t warps)
{
	const MockModule *mm = mf->mod;
	const char *text = mm->text;
	char ent[96];
	snprintf(ent, sizeof ent, ".entry %s(", mf->name);
	const char *body = strstr(text, ent);
	const char *bpw = strstr(text, "[warp][record][value][lane] (");
	unsigned char *dump = NULL;
	for (int g = 0; g < mm->nglobals; g++)
		if (!strcmp(mm->globals[g].name, "__d4r_replay_regs"))
			dump = (unsigned char *)(uintptr_t)*mm->globals[g].p;
	if (!body || !bpw || !dump)
		return;
	unsigned long long wbytes = strtoull(bpw + 29, NULL, 10);
	const char *body_end = strstr(body + 1, ".entry ");
	if (!body_end)
		body_end = body + strlen(body);
	char flip[64] = "";
	unsigned long long fw = 0;
	unsigned fl = 0;
	const char *fp = strstr(body, "// mock: probe-flip ");
	if (fp && fp < body_end && strstr(mf->name, "spliced"))
		sscanf(fp + 20, "%63s %llu %u", flip, &fw, &fl);
	char skip[64] = ""; /* "// mock: replay-skip REG": REG is not stored */
	const char *sp = strstr(body, "// mock: replay-skip ");
	if (sp && sp < body_end)
		sscanf(sp + 21, "%63s", skip);
	for (const char *p = body; (p = strstr(p, "st.global.b")) != NULL && p < body_end;
	     p++) {
		unsigned bits;
		unsigned long long off;
		char reg[64];
		int used = 0;
		if (sscanf(p, "st.global.b%u \t[%%d4rpl%*[^+]+%llu], %63[^;];%n", &bits,
		           &off, reg, &used) != 3 ||
		    !used || (bits != 32 && bits != 64))
			continue;
		size_t rn = strlen(reg);
		if (*skip && !strcmp(skip, reg))
			continue;
		for (uint64_t w = 0; w < warps; w++)
			for (unsigned l = 0; l < 32; l++) {
				uint32_t v = probe_value(reg, rn, w, l);
				if (*flip && !strcmp(flip, reg) && w == fw && l == fl)
					v ^= 1;
				unsigned char *at =
				    dump + w * wbytes + off + l * (bits / 8);
				memcpy(at, &v, 4);
				if (bits == 64) {
					uint32_t hi = probe_value(reg, rn, w, l + 32);
					memcpy(at + 4, &hi, 4);
				}
			}
	}
}

/*
 * What a launch of function mf writes to the layer's memory, by markers
 * (params: its parameter block):
 *   "// mock: global-write P OFF V" in mf's body: byte V at OFF into the
 *     buffer whose address is the parameter block's 8 bytes at P;
 *   "// mock: surface-write P OFF V" in mf's body: byte V at OFF into the
 *     array (rows packed) of the surface object at P;
 *   "// mock: dump-global-write NAME P OFF V", "// mock: dump-surface-write
 *     NAME P OFF V" anywhere in the module: the same, in a launch of the
 *     function named NAME only (a write the dump's kernel does and no
 *     replay entry, whose module does not hold the marker).
 */
static void mock_writes(const MockFunc *mf, const unsigned char *params, size_t size)
{
	const char *text = mf->mod->text;
	char ent[96];
	snprintf(ent, sizeof ent, ".entry %s(", mf->name);
	const char *body = strstr(text, ent);
	const char *body_end = body ? strstr(body + 1, ".entry ") : NULL;
	if (body && !body_end)
		body_end = body + strlen(body);
	static const char *const marks[] = {
	    "// mock: global-write ", "// mock: surface-write ",
	    "// mock: dump-global-write ", "// mock: dump-surface-write "};
	for (int k = 0; k < 4; k++) {
		size_t ml = strlen(marks[k]);
		for (const char *p = text; (p = strstr(p, marks[k])) != NULL; p += ml) {
			unsigned long long P, off;
			unsigned v;
			char name[96] = "";
			if (k < 2) {
				if (!body || p < body || p >= body_end ||
				    sscanf(p + ml, "%llu %llu %u", &P, &off, &v) != 3)
					continue;
			} else if (sscanf(p + ml, "%95s %llu %llu %u", name, &P, &off,
			                  &v) != 4 ||
			           strcmp(name, mf->name))
				continue;
			if (!params || P + 8 > size)
				continue;
			uint64_t h = rd64(params + P);
			if (k % 2 == 0)
				((unsigned char *)(uintptr_t)h)[off] = (unsigned char)v;
			else if (h >= 1 && h <= 64 && objects[h - 1] &&
			         off < (unsigned long long)objects[h - 1]->w *
			                   objects[h - 1]->h * objects[h - 1]->ch *
			                   objects[h - 1]->es)
				objects[h - 1]->p[off] = (unsigned char)v;
		}
	}
}
