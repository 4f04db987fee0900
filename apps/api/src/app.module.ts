import { DynamicModule, Module } from '@nestjs/common';
import { PlatformModule, type PlatformOptions } from '../../../libs/platform/src/index.js';
import { KeysModule } from '../../../libs/keys/src/index.js';

/** Imports the context modules, nothing else. */
@Module({})
export class AppModule {
  static register(platform: PlatformOptions): DynamicModule {
    return {
      module: AppModule,
      imports: [PlatformModule.forRoot(platform), KeysModule],
    };
  }
}
