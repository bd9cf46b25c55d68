import { createContext, useContext } from 'react';
import type { Shop } from './types';

export interface ShopContextValue {
  /** The shop's domain, as API paths name it. */
  domain: string;
  shop: Shop;
}

export const ShopContext = createContext<ShopContextValue | null>(null);

export function useShop(): ShopContextValue {
  const value = useContext(ShopContext);
  if (!value) throw new Error('useShop outside the ShopContext provider');
  return value;
}

/** Short confirmations ("Widget saved") shown as a Polaris toast. */
export type Notify = (message: string, options?: { error?: boolean }) => void;

export const ToastContext = createContext<Notify>(() => {});

export const useToast = (): Notify => useContext(ToastContext);
