// Minimal Lumi H5P server for the side-by-side benchmark (bench/h5p-lumi/run.sh).
//
// It serves, under /h5p, the three operations the benchmark measures with
// Lumi's stock building blocks and file-based storage in a temp dir:
//   POST /h5p/contents/upload                   H5PEditor.uploadPackage + saveOrUpdateContent
//   GET  /h5p/contents/:id/play                 H5PPlayer.render with a JSON renderer
//   POST /h5p/contentUserData/:id/:type/:sub    h5p-express contentUserData route
// plus GET /h5p/health. Every request acts as one fake logged-in user.
//
// Environment: LUMI_PORT (default 3900), LUMI_HOST (127.0.0.1),
// LUMI_DATA_DIR (default: a new temp dir), LUMI_LIBRARY_CACHE (1 = wrap the
// file library storage in Lumi's CachedLibraryStorage, the default; 0 = plain).
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const express = require('express');
const fileUpload = require('express-fileupload');
const H5P = require('@lumieducation/h5p-server');
const { h5pAjaxExpressRouter } = require('@lumieducation/h5p-express');

const port = Number(process.env.LUMI_PORT || 3900);
const host = process.env.LUMI_HOST || '127.0.0.1';
const dataDir =
    process.env.LUMI_DATA_DIR || fs.mkdtempSync(path.join(os.tmpdir(), 'lumi-h5p-'));
const useLibraryCache = (process.env.LUMI_LIBRARY_CACHE || '1') !== '0';

function dir(name) {
    const p = path.join(dataDir, name);
    fs.mkdirSync(p, { recursive: true });
    return p;
}

// The benchmark has no Internet: Lumi must never try the H5P Hub, and the
// H5P core/editor client files (normally downloaded from GitHub) are absent.
// The core and editor dirs only back express.static routes of the AJAX
// router, which the measured operations never hit, so empty dirs suffice.
const coreDir = dir('core');
const editorDir = dir('editor');

const benchUser = {
    id: '1',
    name: 'Bench User',
    email: 'bench@localhost',
    type: 'local'
};

async function main() {
    const config = new H5P.H5PConfig(undefined, {
        baseUrl: '/h5p',
        fetchingDisabled: 1,
        sendUsageStatistics: false,
        contentHubEnabled: false
    });

    const fileLibraries = new H5P.fsImplementations.FileLibraryStorage(dir('libraries'));
    const libraryStorage = useLibraryCache
        ? new H5P.cacheImplementations.CachedLibraryStorage(fileLibraries)
        : fileLibraries;
    const contentStorage = new H5P.fsImplementations.FileContentStorage(dir('content'));
    const temporaryStorage = new H5P.fsImplementations.DirectoryTemporaryFileStorage(dir('temp'));
    const userDataStorage = new H5P.fsImplementations.FileContentUserDataStorage(dir('userdata'));

    const editor = new H5P.H5PEditor(
        new H5P.fsImplementations.InMemoryStorage(),
        config,
        libraryStorage,
        contentStorage,
        temporaryStorage,
        undefined,
        undefined,
        undefined,
        userDataStorage
    );
    const player = new H5P.H5PPlayer(
        libraryStorage,
        contentStorage,
        config,
        undefined,
        undefined,
        undefined,
        undefined,
        userDataStorage
    );
    // JSON renderer: the route answers the player model itself, like the
    // LMS's GET /h5p/contents/{id}/play.
    player.setRenderer((model) => model);

    const app = express();
    app.disable('x-powered-by');
    app.use(express.json({ limit: '1mb' }));
    app.use(express.urlencoded({ extended: true, limit: '1mb' }));
    app.use(
        fileUpload({
            limits: { fileSize: config.maxTotalSize || 1024 * 1024 * 1024 },
            abortOnLimit: true
        })
    );
    // Fake authentication: whatever Authorization header the client sends,
    // the request acts as the bench user.
    app.use((req, _res, next) => {
        req.user = benchUser;
        next();
    });

    app.get('/h5p/health', (_req, res) => {
        res.json({ ok: true, lumi: true, dataDir });
    });

    app.post('/h5p/contents/upload', async (req, res, next) => {
        try {
            const file = req.files && req.files.h5p_file;
            if (!file || Array.isArray(file)) {
                res.status(422).json({ success: false, message: 'Field h5p_file is missing.' });
                return;
            }
            const upload = await editor.uploadPackage(file.data, req.user);
            const metadata = upload.metadata;
            const main = (metadata.preloadedDependencies || []).find(
                (dep) => dep.machineName === metadata.mainLibrary
            );
            if (!main) {
                res.status(422).json({ success: false, message: 'Main library not found.' });
                return;
            }
            const ubername = `${main.machineName} ${main.majorVersion}.${main.minorVersion}`;
            const contentId = await editor.saveOrUpdateContent(
                undefined,
                upload.parameters,
                metadata,
                ubername,
                req.user
            );
            res.status(201).json({
                success: true,
                message: '',
                data: {
                    contentId: String(contentId),
                    metadata,
                    installedLibraries: upload.installedLibraries
                }
            });
        } catch (err) {
            next(err);
        }
    });

    app.get('/h5p/contents/:id/play', async (req, res, next) => {
        try {
            const model = await player.render(
                req.params.id,
                req.user,
                typeof req.query.language === 'string' ? req.query.language : 'en',
                {
                    contextId:
                        typeof req.query.contextId === 'string' ? req.query.contextId : undefined,
                    readOnlyState: req.query.readOnlyState === 'yes'
                }
            );
            res.set('Cache-Control', 'no-store');
            res.json({ success: true, message: '', data: model });
        } catch (err) {
            next(err);
        }
    });

    // Lumi's own AJAX router: contentUserData (user state), finishedData,
    // library and content files, /ajax actions. Core/editor static files
    // come from the empty dirs above.
    app.use('/h5p', h5pAjaxExpressRouter(editor, coreDir, editorDir));

    // Errors outside Lumi's router (upload, play).
    app.use((err, _req, res, _next) => {
        const status = err.httpStatusCode || (err.errorId ? 400 : 500);
        res.status(status).json({
            success: false,
            message: err.errorId ? `${err.errorId} ${JSON.stringify(err.replacements || {})}` : String(err.message || err)
        });
    });

    app.listen(port, host, () => {
        console.log(`Lumi H5P bench server on http://${host}:${port}/h5p (data ${dataDir}, library cache ${useLibraryCache ? 'on' : 'off'})`);
    });
}

main().catch((err) => {
    console.error(err);
    process.exit(1);
});
