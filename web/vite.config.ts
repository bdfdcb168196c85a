// Builds the pages of the front end: each HTML file at the root is an entry (the embedded
// components' embed.html and the demo host page; the operator console adds its own), sharing
// src/ui and one chunk of Preact. Content-hashed assets go to dist/ui/assets, served at /ui/assets/ (base '/', assetsDir 'ui/assets').
// The loader script has its own build (vite.loader.config.ts): it runs in customers' pages.
import { defineConfig } from 'vite'

export default defineConfig({
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    assetsDir: 'ui/assets',
    emptyOutDir: true,
    target: 'es2020',
    modulePreload: { polyfill: false },
    sourcemap: false,
    rollupOptions: {
      input: { embed: 'embed.html', demo: 'demo.html', console: 'console.html' },
    },
  },
})
