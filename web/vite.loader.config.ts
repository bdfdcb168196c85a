// Builds /embed/v1.js, the loader that customers' pages include: one small script without
// dependencies, as an IIFE that defines window.Switchboard. Its name is stable (no hash): pages
// refer to it by URL.
import { defineConfig } from 'vite'

export default defineConfig({
  build: {
    outDir: 'dist/loader',
    emptyOutDir: true,
    target: 'es2018',
    sourcemap: false,
    lib: {
      entry: 'src/loader/v1.ts',
      name: 'Switchboard',
      formats: ['iife'],
      fileName: () => 'v1.js',
    },
  },
})
