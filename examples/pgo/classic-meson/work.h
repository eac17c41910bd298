long work(long n, const char *key);
