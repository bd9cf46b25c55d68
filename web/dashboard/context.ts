import { createContext, useContext } from 'react';
import type { Shop } from './types';

/** The shop the dashboard opened with. */
export interface OpenedShop {
  /** The shop's domain, as API paths name it. */
  domain: string;
  shop: Shop;
}

export interface ShopContextValue extends OpenedShop {
  /** Makes `shop` (as a change of its settings answered it) the one every page reads. */
  shopChanged: (shop: Shop) => void;
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
