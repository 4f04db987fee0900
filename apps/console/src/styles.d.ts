// CSS files are bundled by Vite.
declare module '*.css';
