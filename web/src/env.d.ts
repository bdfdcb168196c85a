// Vite imports stylesheets for their side effects.
declare module '*.css'
