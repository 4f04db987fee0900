import { ApiProperty } from '@nestjs/swagger';
import { IsNotEmpty, IsString, MaxLength } from 'class-validator';

export class CreateConsoleSessionDto {
  @ApiProperty({ description: 'The OPERATOR_TOKEN', example: 'op_…' })
  @IsString({ message: 'token must be a string' })
  @IsNotEmpty({ message: 'token is required' })
  @MaxLength(1024, { message: 'token must be shorter than or equal to 1024 characters' })
  token: string;
}

export class ConsoleSessionView {
  @ApiProperty({ example: 'console_session' }) object: 'console_session';
  @ApiProperty({ description: 'When the session ends (Unix milliseconds)', example: 1790000000000 }) expiresAt: number;
  @ApiProperty({ description: 'Send as X-CSRF-Token with every change made with the session cookie' }) csrfToken: string;
}
