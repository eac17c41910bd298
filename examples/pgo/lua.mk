# Our build of Debian's Lua 5.4 sources (copied next to src/ by fetch-sources.sh).
# Why not Debian's own Makefile: its patched build goes through libtool and
# dpkg-buildflags, which would add flags behind hone's back. This one takes CC, AR,
# RANLIB, CFLAGS and LDFLAGS from the environment, like any autoconf-style project.
CC ?= gcc
AR ?= ar
RANLIB ?= ranlib
CFLAGS ?= -O2
LDFLAGS ?=
CORE = lapi lcode lctype ldebug ldo ldump lfunc lgc llex lmem lobject lopcodes lparser \
       lstate lstring ltable ltm lundump lvm lzio lauxlib lbaselib lcorolib ldblib liolib \
       lmathlib loadlib loslib lstrlib ltablib lutf8lib linit
OBJS = $(addprefix src/,$(addsuffix .o,$(CORE)))

lua: src/lua.o src/liblua.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ src/lua.o src/liblua.a -lm -ldl -Wl,-E

src/liblua.a: $(OBJS)
	$(AR) rcs $@ $(OBJS)
	$(RANLIB) $@

# Debian's patched luaconf.h includes this header, which debian/rules normally writes.
src/lua5.4-deb-multiarch.h:
	printf '#ifndef _LUA_DEB_MULTIARCH_\n#define _LUA_DEB_MULTIARCH_\n#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"\n#endif\n' > $@

src/%.o: src/%.c src/lua5.4-deb-multiarch.h
	$(CC) -std=gnu99 -Wall -DLUA_COMPAT_5_3 -DLUA_USE_LINUX $(CFLAGS) -c -o $@ $<

clean:
	rm -f lua src/*.o src/liblua.a
