(** * Modp: the integers modulo [p] with primitive 63-bit integers.

    An element is a residue [x < p] with a flag.  The flag turns false when
    an inverse fails ([x y <> 1 mod p], e.g. a denominator divisible by
    [p]) and stays false in everything computed from it.  The relation
    [Rp p q x] says: when the flag of [x] is true, the rational [q] is
    [p]-integral ([q = a/b] with [b] invertible mod [p]) and [x] is its
    residue.  [Fp_rel]: every operation preserves it, so by the relational
    lemmas of Series, Tangent and Network, any computation mod [p] whose
    flags are true is the reduction of the same computation over Q.
    Nothing requires [p] to be prime: invertibility is checked where it is
    used.  [1 < p < 2^31] keeps every product below [2^62]. *)

From Coq Require Import ZArith QArith Lia Uint63 Zdiv.
From Symattn Require Import Alg.

Section Fp.
Variable p : int.

Definition fp := (int * bool)%type.

Definition fadd (x y : fp) : fp :=
  let (a, f) := x in let (b, g) := y in (((a + b) mod p)%uint63, andb f g).
Definition fsub (x y : fp) : fp :=
  let (a, f) := x in let (b, g) := y in (((a + (p - b)) mod p)%uint63, andb f g).
Definition fmul (x y : fp) : fp :=
  let (a, f) := x in let (b, g) := y in (((a * b) mod p)%uint63, andb f g).

(** [b^e mod p] by squaring (any candidate inverse will do: it is checked). *)
Fixpoint powmod (n : nat) (b e acc : int) : int :=
  match n with
  | O => acc
  | S n' =>
      let acc' := if (e land 1 =? 1)%uint63 then ((acc * b) mod p)%uint63 else acc in
      powmod n' ((b * b) mod p)%uint63 (e >> 1)%uint63 acc'
  end.

Definition cand_inv (a : int) : int := powmod 63 (a mod p)%uint63 (p - 2)%uint63 1%uint63.

Definition finv (x : fp) : fp :=
  let (a, f) := x in
  let y := (cand_inv a mod p)%uint63 in
  (y, andb f ((a * y) mod p =? 1)%uint63).

Definition of_Zmod (z : Z) : int := of_Z (z mod to_Z p)%Z.

Definition fofQ (q : Q) : fp :=
  let a := of_Zmod (Qnum q) in
  let b := of_Zmod (Zpos (Qden q)) in
  let y := (cand_inv b mod p)%uint63 in
  (((a * y) mod p)%uint63, ((b * y) mod p =? 1)%uint63).

End Fp.

#[global] Arguments cand_inv : simpl never.
#[global] Arguments powmod : simpl never.

Definition Fpalg (p : int) : alg := {|
  car := fp;
  zero := (0%uint63, true);
  one := (1%uint63, true);
  add := fadd p;
  sub := fsub p;
  mul := fmul p;
  inv := finv p;
  ofQ := fofQ p
|}.

Local Open Scope Z_scope.

(** Congruence modulo [P] (a relation that is not [eq], so that setoid
    rewriting works). *)
Definition cong (P a b : Z) : Prop := exists k, a - b = k * P.

Lemma cong_refl P a : cong P a a.
Proof. exists 0; lia. Qed.
Lemma cong_sym P a b : cong P a b -> cong P b a.
Proof. intros [k H]; exists (- k); lia. Qed.
Lemma cong_trans P a b c : cong P a b -> cong P b c -> cong P a c.
Proof. intros [k H] [l H']; exists (k + l); lia. Qed.

#[global] Instance cong_equiv P : Equivalence (cong P).
Proof. split; [intro; apply cong_refl|intros ? ?; apply cong_sym|intros ? ? ?; apply cong_trans]. Qed.

#[global] Instance cong_add P : Proper (cong P ==> cong P ==> cong P) Z.add.
Proof. intros a b [k H] c d [l H']; exists (k + l); lia. Qed.
#[global] Instance cong_sub P : Proper (cong P ==> cong P ==> cong P) Z.sub.
Proof. intros a b [k H] c d [l H']; exists (k - l); lia. Qed.
#[global] Instance cong_opp P : Proper (cong P ==> cong P) Z.opp.
Proof. intros a b [k H]; exists (- k); lia. Qed.
#[global] Instance cong_mul P : Proper (cong P ==> cong P ==> cong P) Z.mul.
Proof.
  intros a b [k H] c d [l H']; exists (a * l + d * k).
  assert (E : a * c - b * d = a * (c - d) + d * (a - b)) by ring.
  rewrite E, H, H'; ring.
Qed.

Lemma cong_eq P a b : a = b -> cong P a b.
Proof. intros ->; reflexivity. Qed.

Lemma cong_mod P a : P <> 0 -> cong P (a mod P) a.
Proof. intros H; exists (- (a / P)); pose proof (Z.div_mod a P H); lia. Qed.

Lemma cong_mod_eq P a b : P <> 0 -> cong P a b -> a mod P = b mod P.
Proof.
  intros HP [k H]; replace a with (b + k * P) by lia.
  rewrite Z_mod_plus_full; reflexivity.
Qed.

Ltac cong_ring := apply cong_eq; ring.

(** [q] is [P]-integral with residue [z]: [q = a/b], [b bi = 1] and [z = a bi] mod [P]. *)
Definition modrep (P : Z) (q : Q) (z : Z) : Prop :=
  exists a b bi : Z, b <> 0 /\ (q == inject_Z a / inject_Z b)%Q /\
    cong P (b * bi) 1 /\ cong P z (a * bi).

Definition Rp (p : int) (q : Q) (x : fp) : Prop :=
  snd x = true -> (to_Z (fst x) < to_Z p /\ modrep (to_Z p) q (to_Z (fst x))).

Lemma inject_Z_neq0 b : b <> 0 -> ~ (inject_Z b == 0)%Q.
Proof. intros H E; apply H; unfold Qeq in E; simpl in E; lia. Qed.

Lemma modrep_compat P q q' z : (q == q')%Q -> modrep P q z -> modrep P q' z.
Proof.
  intros E [a [b [bi [Hb [Hq [H1 H2]]]]]]; exists a, b, bi; repeat split; auto.
  rewrite <- E; auto.
Qed.

Lemma modrep_z P q z z' : cong P z z' -> modrep P q z -> modrep P q z'.
Proof.
  intros E [a [b [bi [Hb [Hq [H1 H2]]]]]]; exists a, b, bi; repeat split; auto.
  rewrite <- E; auto.
Qed.

Lemma modrep_add P q q' z z' : modrep P q z -> modrep P q' z' -> modrep P (q + q') (z + z').
Proof.
  intros [a [b [bi [Hb [Hq [Hbi Hz]]]]]] [a' [b' [bi' [Hb' [Hq' [Hbi' Hz']]]]]].
  exists (a * b' + a' * b), (b * b'), (bi * bi'); repeat split.
  - lia.
  - rewrite Hq, Hq', !inject_Z_plus, !inject_Z_mult.
    field; split; apply inject_Z_neq0; auto.
  - transitivity ((b * bi) * (b' * bi')); [cong_ring|]. rewrite Hbi, Hbi'; cong_ring.
  - rewrite Hz, Hz'.
    transitivity (a * bi * (b' * bi') + a' * bi' * (b * bi)); [|cong_ring].
    rewrite Hbi, Hbi'; cong_ring.
Qed.

Lemma modrep_mul P q q' z z' : modrep P q z -> modrep P q' z' -> modrep P (q * q') (z * z').
Proof.
  intros [a [b [bi [Hb [Hq [Hbi Hz]]]]]] [a' [b' [bi' [Hb' [Hq' [Hbi' Hz']]]]]].
  exists (a * a'), (b * b'), (bi * bi'); repeat split.
  - lia.
  - rewrite Hq, Hq', !inject_Z_mult. field; split; apply inject_Z_neq0; auto.
  - transitivity ((b * bi) * (b' * bi')); [cong_ring|]. rewrite Hbi, Hbi'; cong_ring.
  - rewrite Hz, Hz'; cong_ring.
Qed.

Lemma modrep_opp P q z : modrep P q z -> modrep P (- q) (- z).
Proof.
  intros [a [b [bi [Hb [Hq [Hbi Hz]]]]]]; exists (- a), b, bi; repeat split; auto.
  - rewrite Hq, inject_Z_opp; field; apply inject_Z_neq0; auto.
  - rewrite Hz; cong_ring.
Qed.

Lemma modrep_int P z : modrep P (inject_Z z) z.
Proof.
  exists z, 1, 1; repeat split; try lia; [|cong_ring|cong_ring].
  unfold Qeq; simpl; ring.
Qed.

Lemma modrep_inv P q z y : 1 < P -> modrep P q z -> cong P (z * y) 1 -> modrep P (/ q) y.
Proof.
  intros HP [a [b [bi [Hb [Hq [Hbi Hz]]]]]] Hzy.
  assert (Ha : a <> 0).
  { intros ->. assert (C : cong P 0 1) by (rewrite <- Hzy, Hz; cong_ring).
    apply cong_mod_eq in C; [|lia]. rewrite Zmod_0_l, Zmod_1_l in C; lia. }
  exists b, a, (y * bi); repeat split; auto.
  - rewrite Hq; field; split; apply inject_Z_neq0; auto.
  - (* a = z b mod P, so a (y bi) = z y (b bi) = 1 *)
    assert (Ha' : cong P a (z * b)).
    { rewrite Hz. transitivity (a * (b * bi)); [rewrite Hbi; cong_ring|cong_ring]. }
    rewrite Ha'. transitivity ((z * y) * (b * bi)); [cong_ring|]. rewrite Hzy, Hbi; cong_ring.
  - transitivity (y * (b * bi)); [rewrite Hbi; cong_ring|cong_ring].
Qed.

(** ** Machine arithmetic below [2^31] *)

Section Machine.
Variable p : int.
Hypothesis Hp : 1 < to_Z p < 2147483648.

Let wB_big : wB = 9223372036854775808.
Proof. reflexivity. Qed.

Lemma phi_mod x : to_Z (x mod p)%uint63 = to_Z x mod to_Z p.
Proof. apply mod_spec. Qed.

Lemma phi_mod_lt x : to_Z (x mod p)%uint63 < to_Z p.
Proof. rewrite phi_mod; apply Z.mod_pos_bound; lia. Qed.

Lemma phi_add x y : to_Z x < to_Z p -> to_Z y < to_Z p -> to_Z ((x + y) mod p)%uint63 = (to_Z x + to_Z y) mod to_Z p.
Proof.
  intros; rewrite phi_mod, add_spec, (Zmod_small (to_Z x + to_Z y) wB); auto.
  pose proof (to_Z_bounded x); pose proof (to_Z_bounded y); pose proof wB_big; lia.
Qed.

Lemma phi_mul x y : to_Z x < to_Z p -> to_Z y < to_Z p -> to_Z ((x * y) mod p)%uint63 = (to_Z x * to_Z y) mod to_Z p.
Proof.
  intros; rewrite phi_mod, mul_spec, (Zmod_small (to_Z x * to_Z y) wB); auto.
  pose proof (to_Z_bounded x); pose proof (to_Z_bounded y).
  assert (0 <= to_Z x * to_Z y) by (apply Z.mul_nonneg_nonneg; lia).
  assert (to_Z x * to_Z y <= 2147483647 * 2147483647) by (apply Z.mul_le_mono_nonneg; lia).
  rewrite wB_big; lia.
Qed.

Lemma phi_sub x y : to_Z x < to_Z p -> to_Z y < to_Z p ->
  to_Z ((x + (p - y)) mod p)%uint63 = (to_Z x + (to_Z p - to_Z y)) mod to_Z p.
Proof.
  intros; rewrite phi_mod, add_spec, sub_spec.
  pose proof (to_Z_bounded x); pose proof (to_Z_bounded y); pose proof wB_big.
  rewrite (Zmod_small (to_Z p - to_Z y)) by lia.
  rewrite (Zmod_small (to_Z x + _)) by lia; auto.
Qed.

Lemma phi_ofZmod z : to_Z (of_Zmod p z) = z mod to_Z p.
Proof.
  unfold of_Zmod; rewrite of_Z_spec, Zmod_small; auto.
  pose proof (Z.mod_pos_bound z (to_Z p)); pose proof wB_big; lia.
Qed.

Lemma cong_of_mod a : cong (to_Z p) (a mod to_Z p) a.
Proof. apply cong_mod; lia. Qed.

Lemma check_one a y : ((a * y) mod p =? 1)%uint63 = true -> to_Z a < to_Z p -> to_Z y < to_Z p ->
  cong (to_Z p) (to_Z a * to_Z y) 1.
Proof.
  intros E Ha Hy; apply eqb_correct in E.
  apply (f_equal to_Z) in E; rewrite phi_mul in E; auto.
  rewrite <- (cong_of_mod (to_Z a * to_Z y)), E; reflexivity.
Qed.

Lemma Fp_rel : alg_rel Qalg (Fpalg p) (Rp p).
Proof.
  pose proof (to_Z_bounded p).
  split; unfold Rp; cbn [car Qalg Fpalg zero one add sub mul inv ofQ fst snd].
  - intros _; rewrite to_Z_0; split; [lia|].
    exists 0, 1, 1; split; [lia|split; [reflexivity|split; cong_ring]].
  - intros _; rewrite to_Z_1; split; [lia|].
    exists 1, 1, 1; split; [lia|split; [reflexivity|split; cong_ring]].
  - intros [a f] [a' f'] [b g] [b' g'] H1 H2; simpl in *.
    intros E; apply andb_prop in E; destruct E as [E1 E2]; subst.
    destruct (H1 eq_refl) as [Ha Ra]; destruct (H2 eq_refl) as [Hb Rb].
    split; [apply phi_mod_lt|]. rewrite phi_add by auto.
    eapply modrep_compat; [symmetry; apply Qplus'_correct|].
    eapply modrep_z; [symmetry; apply cong_of_mod|]. apply modrep_add; auto.
  - intros [a f] [a' f'] [b g] [b' g'] H1 H2; simpl in *.
    intros E; apply andb_prop in E; destruct E as [E1 E2]; subst.
    destruct (H1 eq_refl) as [Ha Ra]; destruct (H2 eq_refl) as [Hb Rb].
    split; [apply phi_mod_lt|]. rewrite phi_sub by auto.
    eapply modrep_compat; [symmetry; rewrite Qminus'_correct; unfold Qminus; reflexivity|].
    eapply modrep_z; [symmetry; apply cong_of_mod|].
    eapply modrep_z; [|apply modrep_add; [apply Ra|apply modrep_opp, Rb]].
    exists (-1); lia.
  - intros [a f] [a' f'] [b g] [b' g'] H1 H2; simpl in *.
    intros E; apply andb_prop in E; destruct E as [E1 E2]; subst.
    destruct (H1 eq_refl) as [Ha Ra]; destruct (H2 eq_refl) as [Hb Rb].
    split; [apply phi_mod_lt|]. rewrite phi_mul by auto.
    eapply modrep_compat; [symmetry; apply Qmult'_correct|].
    eapply modrep_z; [symmetry; apply cong_of_mod|]. apply modrep_mul; auto.
  - intros q [a f] Hq; cbn [finv fst snd] in *.
    intros E; apply andb_prop in E; destruct E as [E1 E2]; subst.
    destruct (Hq eq_refl) as [Ha Ra].
    split; [apply phi_mod_lt|].
    apply modrep_inv with (to_Z a); [lia|auto|].
    apply check_one; auto; apply phi_mod_lt.
  - intros q E; cbn [fofQ fst snd] in *.
    assert (Hb : to_Z (of_Zmod p (Zpos (Qden q))) < to_Z p)
      by (rewrite phi_ofZmod; apply Z.mod_pos_bound; lia).
    assert (Ha : to_Z (of_Zmod p (Qnum q)) < to_Z p)
      by (rewrite phi_ofZmod; apply Z.mod_pos_bound; lia).
    split; [apply phi_mod_lt|].
    rewrite phi_mul by (auto; apply phi_mod_lt).
    pose proof (check_one _ _ E Hb (phi_mod_lt _)) as C.
    exists (Qnum q), (Zpos (Qden q)), (to_Z (cand_inv p (of_Zmod p (Zpos (Qden q))) mod p)%uint63).
    repeat split; [lia| | |].
    + destruct q as [n d]; unfold Qdiv; simpl.
      rewrite Qmake_Qdiv; reflexivity.
    + rewrite <- C, phi_ofZmod, cong_of_mod; reflexivity.
    + rewrite cong_of_mod, phi_ofZmod, cong_of_mod; reflexivity.
Qed.

End Machine.
