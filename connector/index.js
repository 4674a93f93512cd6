// Zapier's deployed wrapper always loads the root index.js; the app is compiled from src/ to dist/ by tsc.
module.exports = require('./dist/index.js').default;
